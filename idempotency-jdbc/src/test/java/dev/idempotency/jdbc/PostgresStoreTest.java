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
    /** Statements of a first execution, as the dialect's Javadoc states: one claim-or-find statement and the completing UPDATE; a replay, the claim-or-find statement. */
    static final int STATEMENTS_PER_FIRST_EXECUTION = 2;
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
        return false;
    }

    @Override
    protected void closeDataSource() {
        if (pool != null) {
            pool.close();
        }
    }
}
