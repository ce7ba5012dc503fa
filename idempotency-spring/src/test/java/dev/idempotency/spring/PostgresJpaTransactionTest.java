package dev.idempotency.spring;

import com.zaxxer.hikari.HikariDataSource;

/** {@link AbstractJpaTransactionTest} on the PostgreSQL server of the environment ({@code IDEMPOTENCY_PG_URL}). */
class PostgresJpaTransactionTest extends AbstractJpaTransactionTest {

    @Override
    HikariDataSource createPool() {
        return Databases.postgres();
    }
}
