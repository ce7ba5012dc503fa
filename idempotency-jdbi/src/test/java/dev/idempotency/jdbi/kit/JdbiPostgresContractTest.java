package dev.idempotency.jdbi.kit;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.testsupport.TestDatabases;

/** The store contract through the Jdbi adapter on the PostgreSQL server of the environment. */
class JdbiPostgresContractTest extends JdbiStoreContract {
    @Override
    HikariDataSource createPool() {
        return TestDatabases.postgres();
    }
}
