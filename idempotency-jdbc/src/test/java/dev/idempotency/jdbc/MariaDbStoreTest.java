package dev.idempotency.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import javax.sql.DataSource;

/** The store contract on the MariaDB server of the environment. */
class MariaDbStoreTest extends AbstractJdbcStoreTest {

    private HikariDataSource pool;

    @Override
    protected DataSource dataSource() {
        if (pool == null) {
            pool = TestDatabases.mariadb();
        }
        return pool;
    }

    /** max_statement_time (1969) rolls back the waiting statement only: the transaction goes on. */
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
