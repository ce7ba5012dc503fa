package dev.idempotency.spring;

import com.zaxxer.hikari.HikariDataSource;

/** {@link AbstractJdbcTransactionTest} on an in-memory H2 database. */
class H2JdbcTransactionTest extends AbstractJdbcTransactionTest {

    @Override
    HikariDataSource createPool() {
        return Databases.h2("spring-jdbc");
    }
}
