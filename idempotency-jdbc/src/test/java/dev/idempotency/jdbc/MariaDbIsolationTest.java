package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.KeyPolicy;
import dev.idempotency.Outcome;
import dev.idempotency.TransactionConflictException;
import dev.idempotency.testsupport.LazyPool;
import dev.idempotency.testsupport.TestDatabases;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Isolation, time zones, lock timeout and cost on the MariaDB server of the environment. */
class MariaDbIsolationTest extends AbstractIsolationTest {

    private final LazyPool pool = new LazyPool(TestDatabases::mariadb);

    @Override
    protected HikariDataSource dataSource() {
        return pool.get();
    }

    /** InnoDB's locking reads see the latest committed record whatever the snapshot. */
    @Override
    protected boolean staleSnapshotDuplicateConflicts(int isolation) {
        return false;
    }

    /**
     * Under REPEATABLE READ and SERIALIZABLE, InnoDB turns the locks that waited on a claim that rolls
     * back into gap locks, and all waiters but one become deadlock victims (1213); under READ
     * COMMITTED the claim waits in a locking read that leaves none, and the waiters replay.
     */
    @Override
    protected boolean waitersOfARolledBackClaimMayConflict(int isolation) {
        return isolation != Connection.TRANSACTION_READ_COMMITTED;
    }

    @Override
    protected String setSessionTimeZone() {
        return "SET time_zone = '+05:45'";
    }

    @Override
    protected String showSessionTimeZone() {
        return "SELECT @@session.time_zone";
    }

    @Override
    protected void setUnusualSessionSettings(Statement s) throws SQLException {
        s.execute("SET SESSION max_statement_time = 77, SESSION innodb_lock_wait_timeout = 66");
    }

    @Override
    protected String sessionSettingsQuery() {
        return "SELECT @@session.max_statement_time AS max_statement_time, @@session.innodb_lock_wait_timeout AS innodb_lock_wait_timeout,"
                + " @@session.time_zone AS time_zone";
    }

    /** max_statement_time (1969) rolls back the waiting statement only. */
    @Override
    protected boolean transactionUsableAfterLockTimeout() {
        return true;
    }



    // ---- MariaDB only ----------------------------------------------------------------------------

    @Test
    void withInnodbSnapshotIsolationAStaleDuplicateIsATypedConflictAndTheRetryReplays() throws Exception {
        Idempotency<Connection> engine = engine(KeyPolicy.ofDefaults());
        IdempotencyKey key = IdempotencyKey.of("iso", "snapshot-isolation");
        Connection late = dataSource().getConnection();
        try {
            try (Statement s = late.createStatement()) {
                s.execute("SET SESSION innodb_snapshot_isolation = ON");
            }
            late.setAutoCommit(false);
            late.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            late.createStatement().executeQuery("SELECT COUNT(*) FROM iso_anchor").close(); // the snapshot
            Outcome<String> first = Tx.commit(dataSource(), c -> engine.execute(key, c, () -> work(c, key)));
            assertThatThrownBy(() -> engine.execute(key, late, () -> work(late, key)))
                    .isInstanceOf(TransactionConflictException.class)
                    .satisfies(e -> assertThat(RetryableFailures.isRetryable(e)).isTrue())
                    .hasRootCauseMessage("(conn=" + connectionId(late) + ") Record has changed since last read in table 'iso_record';"
                            + " try restarting transaction");
            late.rollback();
            Outcome<String> retry = engine.execute(key, late, () -> work(late, key));
            late.commit();
            assertThat(retry.status()).isEqualTo(Outcome.Status.REPLAYED);
            assertThat(retry.value()).isEqualTo(first.value());
        } finally {
            late.rollback();
            late.close();
            dataSource().evictConnection(late);
        }
        assertThat(executions).hasValue(1);
    }

    private static long connectionId(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT CONNECTION_ID()")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void aShorterInnodbLockWaitTimeoutAlsoGivesInProgressAndTheTransactionStaysUsable() throws Exception {
        Idempotency<Connection> patient = engine(KeyPolicy.builder().lockTimeout(Duration.ofSeconds(30)).build());
        IdempotencyKey key = IdempotencyKey.of("iso", "innodb-timeout");
        Connection waiter = dataSource().getConnection();
        try (Connection holder = dataSource().getConnection()) {
            holder.setAutoCommit(false);
            patient.execute(key, holder, () -> work(holder, key));
            try (Statement s = waiter.createStatement()) {
                s.execute("SET SESSION innodb_lock_wait_timeout = 1");
            }
            waiter.setAutoCommit(false);
            work(waiter, IdempotencyKey.of("iso", "waiter-own-change"));
            long started = System.nanoTime();
            Outcome<String> o = patient.execute(key, waiter, () -> work(waiter, key));
            long waited = (System.nanoTime() - started) / 1_000_000;
            assertThat(o.status()).isEqualTo(Outcome.Status.IN_PROGRESS);
            assertThat(waited).isBetween(900L, 2500L);
            try (Statement s = waiter.createStatement();
                 ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM iso_effect WHERE k = 'iso/waiter-own-change'")) {
                rs.next();
                assertThat(rs.getInt(1)).as("error 1205 rolls back the waiting statement only").isEqualTo(1);
            }
            holder.rollback();
        } finally {
            waiter.rollback();
            waiter.close();
            dataSource().evictConnection(waiter);
        }
    }

    /** Cross-checks the counting wrapper with the server's own count of the session's statements. */
    @Test
    void theServerCountsTheSameStatementsAsTheWrapper() throws Exception {
        long[] cost = serverCount(Connection.TRANSACTION_REPEATABLE_READ, "questions");
        System.out.printf("MariaDB server (Questions): a first execution costs %d statements, a replay %d%n", cost[0], cost[1]);
        assertThat(cost[0]).isEqualTo(MariaDbStoreTest.STATEMENTS_PER_FIRST_EXECUTION);
        assertThat(cost[1]).isEqualTo(MariaDbStoreTest.STATEMENTS_PER_REPLAY);
    }

    /** Under READ COMMITTED the claim waits in a locking read before it inserts: one statement more. */
    @Test
    void underReadCommittedAFirstExecutionCostsOneLockingReadMoreAndAReplayTheSame() throws Exception {
        long[] cost = serverCount(Connection.TRANSACTION_READ_COMMITTED, "questions-rc");
        assertThat(cost[0]).isEqualTo(MariaDbStoreTest.STATEMENTS_PER_FIRST_EXECUTION + 1);
        assertThat(cost[1]).isEqualTo(MariaDbStoreTest.STATEMENTS_PER_REPLAY);
    }

    /** @return the statements of a first execution and of a replay at {@code isolation}, by the server's count */
    private long[] serverCount(int isolation, String id) throws Exception {
        Idempotency<Connection> engine = engine(KeyPolicy.ofDefaults());
        IdempotencyKey key = IdempotencyKey.of("iso", id);
        Connection c = dataSource().getConnection();
        try {
            c.setAutoCommit(false);
            c.setTransactionIsolation(isolation);
            engine.execute(IdempotencyKey.of("iso", "warm-up-" + id), c, () -> "w");
            c.commit();
            long before = questions(c);
            engine.execute(key, c, () -> "v");
            long first = questions(c) - before - 1;
            c.commit();
            before = questions(c);
            assertThat(engine.execute(key, c, () -> "not run").status()).isEqualTo(Outcome.Status.REPLAYED);
            long replay = questions(c) - before - 1;
            c.commit();
            return new long[] {first, replay};
        } finally {
            c.close();
            dataSource().evictConnection(c);
        }
    }

    /** @return the session's statement count; reading it counts one more */
    private static long questions(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SHOW SESSION STATUS LIKE 'Questions'")) {
            rs.next();
            return rs.getLong(2);
        }
    }
}
