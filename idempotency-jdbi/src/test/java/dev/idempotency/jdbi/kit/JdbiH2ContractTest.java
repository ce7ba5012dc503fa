package dev.idempotency.jdbi.kit;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.testsupport.TestDatabases;

/** The store contract through the Jdbi adapter on embedded H2. */
class JdbiH2ContractTest extends JdbiStoreContract {
    @Override
    HikariDataSource createPool() {
        return TestDatabases.h2("kit-jdbi");
    }
}
