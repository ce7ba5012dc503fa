package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.testsupport.LazyPool;
import dev.idempotency.testsupport.TestDatabases;
import java.sql.Connection;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** The store contract on the PostgreSQL server of the environment. */
class PostgresStoreTest extends AbstractJdbcStoreTest {

    private final LazyPool pool = new LazyPool(TestDatabases::postgres);

    @Override
    protected DataSource dataSource() {
        return pool.get();
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
        pool.close();
    }

    /**
     * PostgreSQL's DDL is transactional: on a pool whose connections start with auto-commit off,
     * {@code createTableIfMissing(DataSource)} commits what it created, or the pool's rollback on
     * return would undo it. The store built with an explicit dialect reports it.
     */
    @Test
    void createTableIfMissingCommitsOnAPoolWithoutAutoCommit() throws Exception {
        String name = "idempotency_ddl_" + Long.toHexString(System.nanoTime());
        dev.idempotency.jdbc.dialect.PostgresDialect dialect = new dev.idempotency.jdbc.dialect.PostgresDialect();
        JdbcIdempotencyStore explicit = JdbcIdempotencyStore.builder().table(name).dialect(dialect).build();
        assertThat(explicit.dialect()).containsSame(dialect);
        assertThat(JdbcIdempotencyStore.ofDefaults().dialect()).as("detected per connection").isEmpty();
        DataSource withoutAutoCommit = (DataSource) java.lang.reflect.Proxy.newProxyInstance(DataSource.class.getClassLoader(),
                new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    Object result;
                    try {
                        result = method.invoke(dataSource(), args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                    if (result instanceof Connection c) {
                        c.setAutoCommit(false);
                    }
                    return result;
                });
        try {
            explicit.createTableIfMissing(withoutAutoCommit);
            assertThat(Tx.count(dataSource(), "SELECT COUNT(*) FROM " + name)).as("the table exists for other connections").isZero();
        } finally {
            try (Connection c = dataSource().getConnection(); java.sql.Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS " + name);
            }
        }
    }
}
