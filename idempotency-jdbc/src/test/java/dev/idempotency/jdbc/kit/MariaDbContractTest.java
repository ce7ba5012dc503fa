package dev.idempotency.jdbc.kit;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.testsupport.TestDatabases;

/** The store contract on the MariaDB server of the environment. */
class MariaDbContractTest extends JdbcStoreContract {
    @Override
    HikariDataSource createPool() {
        return TestDatabases.mariadb();
    }
}
