package dev.idempotency.jdbc.lease;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.jdbc.TestDatabases;
import javax.sql.DataSource;

/** Lease mode on in-memory HSQLDB in MVCC mode. */
class HsqldbLeaseModeTest extends AbstractLeaseModeTest {

    private HikariDataSource pool;

    @Override
    protected DataSource dataSource() {
        if (pool == null) {
            pool = TestDatabases.pool("jdbc:hsqldb:mem:lease;hsqldb.tx=mvcc", "SA", "", 24);
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
