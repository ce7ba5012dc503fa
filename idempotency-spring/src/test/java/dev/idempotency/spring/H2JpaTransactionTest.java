package dev.idempotency.spring;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.testsupport.TestDatabases;

/** {@link AbstractJpaTransactionTest} on an in-memory H2 database. */
class H2JpaTransactionTest extends AbstractJpaTransactionTest {

    @Override
    HikariDataSource createPool() {
        return TestDatabases.h2("spring-jpa", 8);
    }
}
