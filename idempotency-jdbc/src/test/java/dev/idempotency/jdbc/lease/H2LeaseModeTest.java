package dev.idempotency.jdbc.lease;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.jdbc.TestDatabases;
import javax.sql.DataSource;

/** Lease mode on embedded H2. */
class H2LeaseModeTest extends AbstractLeaseModeTest {

    private HikariDataSource pool;

    @Override
    protected DataSource dataSource() {
        if (pool == null) {
            pool = TestDatabases.h2("lease");
        }
        return pool;
    }

    @Override
    protected void closeDataSource() {
        if (pool != null) {
            pool.close();
        }
    }
}
