package dev.idempotency.jdbc.lease;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.jdbc.TestDatabases;
import javax.sql.DataSource;

/** Lease mode on the MariaDB server of the environment. */
class MariaDbLeaseModeTest extends AbstractLeaseModeTest {

    private HikariDataSource pool;

    @Override
    protected DataSource dataSource() {
        if (pool == null) {
            pool = TestDatabases.mariadb();
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
