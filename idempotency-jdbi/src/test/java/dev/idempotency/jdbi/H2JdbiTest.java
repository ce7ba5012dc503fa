package dev.idempotency.jdbi;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.testsupport.TestDatabases;

/** The Jdbi adapter on embedded H2. */
class H2JdbiTest extends AbstractJdbiTest {
    @Override
    HikariDataSource createPool() {
        return TestDatabases.h2("jdbi");
    }
}
