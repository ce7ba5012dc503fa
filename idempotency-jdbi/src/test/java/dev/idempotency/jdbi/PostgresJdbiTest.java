package dev.idempotency.jdbi;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.testsupport.TestDatabases;

/** The Jdbi adapter on the PostgreSQL server of the environment ({@code IDEMPOTENCY_PG_URL}). */
class PostgresJdbiTest extends AbstractJdbiTest {

    @Override
    HikariDataSource createPool() {
        return TestDatabases.postgres();
    }
}
