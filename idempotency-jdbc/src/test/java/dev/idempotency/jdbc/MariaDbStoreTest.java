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
    /** Statements of a first execution, as the dialect's Javadoc states: SELECT, INSERT ... ON DUPLICATE KEY UPDATE, the completing UPDATE; a replay, one SELECT. */
    static final int STATEMENTS_PER_FIRST_EXECUTION = 3;
    /** Statements of a replay, as the dialect's Javadoc states. */
    static final int STATEMENTS_PER_REPLAY = 1;

    @Override
    protected int statementsPerFirstExecution() {
        return STATEMENTS_PER_FIRST_EXECUTION;
    }

    @Override
    protected int statementsPerReplay() {
        return STATEMENTS_PER_REPLAY;
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
