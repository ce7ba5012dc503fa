package dev.idempotency.jdbc;

import dev.idempotency.testsupport.LazyPool;
import dev.idempotency.testsupport.TestDatabases;
import javax.sql.DataSource;

/** The store contract on embedded H2, through a HikariCP pool. */
class H2StoreTest extends AbstractJdbcStoreTest {

    private final LazyPool pool = new LazyPool(() -> TestDatabases.h2("contract"));

    @Override
    protected DataSource dataSource() {
        return pool.get();
    }

    /** Statements of a first execution, as the dialect's Javadoc states: the standard claim of SqlDialect: SELECT, INSERT, the completing UPDATE; a replay, one SELECT. */
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
        pool.close();
    }
}
