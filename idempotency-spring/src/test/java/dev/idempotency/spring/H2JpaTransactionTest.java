package dev.idempotency.spring;

import com.zaxxer.hikari.HikariDataSource;

/** {@link AbstractJpaTransactionTest} on an in-memory H2 database. */
class H2JpaTransactionTest extends AbstractJpaTransactionTest {

    @Override
    HikariDataSource createPool() {
        return Databases.h2("spring-jpa");
    }
}
