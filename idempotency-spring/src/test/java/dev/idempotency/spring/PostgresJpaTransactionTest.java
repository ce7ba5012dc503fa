package dev.idempotency.spring;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.testsupport.TestDatabases;

/** {@link AbstractJpaTransactionTest} on the PostgreSQL server of the environment ({@code IDEMPOTENCY_PG_URL}). */
class PostgresJpaTransactionTest extends AbstractJpaTransactionTest {

    @Override
    HikariDataSource createPool() {
        return TestDatabases.postgres(8);
    }
}
