package dev.idempotency.jdbc.kit;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.testsupport.TestDatabases;

/** The store contract on the PostgreSQL server of the environment. */
class PostgresContractTest extends JdbcStoreContract {
    @Override
    HikariDataSource createPool() {
        return TestDatabases.postgres();
    }
}
