package dev.idempotency.spring;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.testsupport.TestDatabases;

/** {@link AbstractJdbcTransactionTest} on an in-memory H2 database. */
class H2JdbcTransactionTest extends AbstractJdbcTransactionTest {

    @Override
    HikariDataSource createPool() {
        return TestDatabases.h2("spring-jdbc", 8);
    }
}
