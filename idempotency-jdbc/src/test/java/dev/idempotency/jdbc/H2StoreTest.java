package dev.idempotency.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import javax.sql.DataSource;

/** The store contract on embedded H2, through a HikariCP pool. */
class H2StoreTest extends AbstractJdbcStoreTest {

    private HikariDataSource pool;

    @Override
    protected DataSource dataSource() {
        if (pool == null) {
            pool = TestDatabases.h2("contract");
        }
        return pool;
    }

    @Override
    protected boolean transactionUsableAfterLockTimeout() {
        return true;
    }

    @Override
    protected void closeDataSource() {
        if (pool != null) {
            pool.close();
        }
    }
}
