package dev.idempotency.spring;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.testsupport.TestDatabases;

/** {@link AbstractJdbcTransactionTest} on the PostgreSQL server of the environment ({@code IDEMPOTENCY_PG_URL}). */
class PostgresJdbcTransactionTest extends AbstractJdbcTransactionTest {

    @Override
    HikariDataSource createPool() {
        return TestDatabases.postgres(8);
    }
}
