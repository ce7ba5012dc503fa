package dev.idempotency.spring;

import com.zaxxer.hikari.HikariDataSource;

/** {@link AbstractJdbcTransactionTest} on the PostgreSQL server of the environment ({@code IDEMPOTENCY_PG_URL}). */
class PostgresJdbcTransactionTest extends AbstractJdbcTransactionTest {

    @Override
    HikariDataSource createPool() {
        return Databases.postgres();
    }
}
