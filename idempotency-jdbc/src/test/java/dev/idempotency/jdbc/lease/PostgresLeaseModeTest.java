package dev.idempotency.jdbc.lease;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.jdbc.TestDatabases;
import javax.sql.DataSource;

/** Lease mode on the PostgreSQL server of the environment. */
class PostgresLeaseModeTest extends AbstractLeaseModeTest {

    private HikariDataSource pool;

    @Override
    protected DataSource dataSource() {
        if (pool == null) {
            pool = TestDatabases.postgres();
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
