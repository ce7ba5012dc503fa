package dev.idempotency.jdbc.kit;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.testsupport.TestDatabases;

/** The store contract on embedded HSQLDB, in its multi-version concurrency mode. */
class HsqldbContractTest extends JdbcStoreContract {
    @Override
    HikariDataSource createPool() {
        return TestDatabases.hsqldb("kit", 16);
    }
}
