package dev.idempotency.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import javax.sql.DataSource;

/** The store contract on the PostgreSQL server of the environment. */
class PostgresStoreTest extends AbstractJdbcStoreTest {

    private HikariDataSource pool;

    @Override
    protected DataSource dataSource() {
        if (pool == null) {
            pool = TestDatabases.postgres();
        }
        return pool;
    }

    /** A cancelled lock wait (57014) aborts the PostgreSQL transaction: the caller rolls back. */
    @Override
    protected boolean transactionUsableAfterLockTimeout() {
        return false;
    }

    @Override
    protected void closeDataSource() {
        if (pool != null) {
            pool.close();
        }
    }
}
