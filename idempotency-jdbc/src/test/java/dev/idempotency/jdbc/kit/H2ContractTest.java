package dev.idempotency.jdbc.kit;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.testsupport.TestDatabases;

/** The store contract on embedded H2. */
class H2ContractTest extends JdbcStoreContract {
    @Override
    HikariDataSource createPool() {
        return TestDatabases.h2("kit");
    }
}
