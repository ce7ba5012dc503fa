package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.KeyPolicy;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.jdbc.kit.JdbcStoreContract;
import dev.idempotency.jdbc.lease.AbstractLeaseModeTest;
import dev.idempotency.jdbc.lease.AbstractRecoveryWorkerTest;
import dev.idempotency.testsupport.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** Every shared suite on the PostgreSQL server of the environment ({@link TestDatabase#POSTGRES}), and what is PostgreSQL's alone. */
class PostgresTest {

    static final TestDatabase DB = TestDatabase.POSTGRES;

    /** What only a JDBC store can break ({@link AbstractJdbcStoreTest}), and PostgreSQL's transactional DDL. */
    @Nested
    class Store extends AbstractJdbcStoreTest {
        Store() {
            super(DB);
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

    /** Chunks of a batch job ({@link AbstractChunkTest}). */
    @Nested
    class Chunks extends AbstractChunkTest {
        Chunks() {
            super(DB);
        }
    }

    /**
     * Isolation levels, session settings, lock waits and costs ({@link AbstractIsolationTest}), and
     * PostgreSQL's round trips on the wire.
     */
    @Nested
    class Isolation extends AbstractIsolationTest {
        Isolation() {
            super(DB);
        }

        /**
         * PostgreSQL reports 40001 when the conflicting row is invisible to a transaction-wide snapshot;
         * its READ UNCOMMITTED is READ COMMITTED.
         */
        @Override
        protected boolean staleSnapshotDuplicateConflicts(int isolation) {
            return isolation >= Connection.TRANSACTION_REPEATABLE_READ;
        }

        @Override
        protected String setSessionTimeZone() {
            return "SET TIME ZONE 'Asia/Kathmandu'";
        }

        @Override
        protected String showSessionTimeZone() {
            return "SHOW TIME ZONE";
        }

        @Override
        protected void setUnusualSessionSettings(Statement s) throws SQLException {
            s.execute("SET statement_timeout = '77s'; SET lock_timeout = '66s'");
        }

        @Override
        protected String sessionSettingsQuery() {
            return "SELECT current_setting('statement_timeout') AS statement_timeout, current_setting('lock_timeout') AS lock_timeout,"
                    + " current_setting('TimeZone') AS time_zone";
        }

        // ---- PostgreSQL only -------------------------------------------------------------------------

        /** Something run on the test's thread while its round trips are counted. */
        @FunctionalInterface
        interface Counted {
            void run() throws Exception;
        }

        /**
         * Counts the round trips {@code body} makes on this thread: pgjdbc logs every Sync message it
         * sends (one per round trip) at FINEST.
         */
        static int roundTrips(Counted body) throws Exception {
            AtomicInteger syncs = new AtomicInteger();
            Thread me = Thread.currentThread();
            Logger pgjdbc = Logger.getLogger("org.postgresql");
            Level level = pgjdbc.getLevel();
            Handler handler = new Handler() {
                @Override
                public void publish(LogRecord r) {
                    if (Thread.currentThread() == me && r.getMessage() != null && r.getMessage().contains("FE=> Sync")) {
                        syncs.incrementAndGet();
                    }
                }

                @Override
                public void flush() {
                }

                @Override
                public void close() {
                }
            };
            handler.setLevel(Level.ALL);
            pgjdbc.setLevel(Level.FINEST);
            pgjdbc.addHandler(handler);
            try {
                body.run();
            } finally {
                pgjdbc.removeHandler(handler);
                pgjdbc.setLevel(level);
            }
            return syncs.get();
        }

        /**
         * Cross-checks the counting wrapper with the wire. The {@code BEGIN} of a transaction travels
         * with its first statement.
         */
        @Test
        void theWireCarriesOneRoundTripPerCountedStatement() throws Exception {
            Idempotency<Connection> engine = engine(KeyPolicy.ofDefaults());
            IdempotencyKey key = IdempotencyKey.of("iso", "round-trips");
            try (Connection c = dataSource().getConnection()) {
                c.setAutoCommit(false);
                engine.execute(IdempotencyKey.of("iso", "warm-up"), c, () -> "w");
                c.commit();
                int first = roundTrips(() -> engine.execute(key, c, () -> "v"));
                c.commit();
                int[] replay = new int[1];
                replay[0] = roundTrips(() -> assertThat(engine.execute(key, c, () -> "not run").status()).isEqualTo(Outcome.Status.REPLAYED));
                c.commit();
                System.out.printf("PostgreSQL wire (Sync messages): a first execution costs %d round trips, a replay %d%n", first, replay[0]);
                assertThat(first).isEqualTo(DB.statements().firstExecution());
                assertThat(replay[0]).isEqualTo(DB.statements().replay());
            }
        }

        /**
         * In a transaction the library runs, the result travels with the {@code COMMIT}: a first
         * execution costs three round trips in all (claim, the work's statement, completion and
         * commit), the record is completed and the work committed, and a replay finds the result.
         */
        @Test
        void aTransactionTheLibraryRunsSendsTheResultWithItsCommit() throws Exception {
            ManagedIdempotency<Connection> managed = ManagedIdempotency.of(engine(KeyPolicy.ofDefaults()),
                    JdbcTransactions.of(dataSource()));
            managed.execute(IdempotencyKey.of("iso", "managed-warm-up"), c -> work(c, IdempotencyKey.of("iso", "managed-warm-up")));
            IdempotencyKey key = IdempotencyKey.of("iso", "managed-round-trips");
            Object[] outcome = new Object[1];
            int trips = roundTrips(() -> outcome[0] = managed.execute(key, c -> work(c, key)));
            System.out.printf("PostgreSQL wire (Sync messages): a first execution in a transaction the library runs costs %d round"
                    + " trips, commit included%n", trips);
            assertThat(trips).isEqualTo(3);
            assertThat(outcome[0]).isInstanceOf(Outcome.Executed.class);
            assertThat(Tx.count(dataSource(), "SELECT COUNT(*) FROM iso_record WHERE key_id = 'managed-round-trips'"
                    + " AND status = 'COMPLETED' AND result IS NOT NULL")).isEqualTo(1);
            assertThat(Tx.count(dataSource(), "SELECT COUNT(*) FROM iso_effect WHERE k = '" + key + "'")).isEqualTo(1);
            Outcome<String> again = managed.execute(key, c -> work(c, key));
            assertThat(again.status()).isEqualTo(Outcome.Status.REPLAYED);
            assertThat(again.value()).isEqualTo(((Outcome<?>) outcome[0]).value());
            assertThat(executions).hasValue(2); // the warm-up and the first execution
        }

        /**
         * The completion sent with the {@code COMMIT} must not let the commit through when it records
         * nothing: a work that deletes its own claim leaves no record to complete, and then neither the
         * work's change nor anything else of the transaction is committed.
         */
        @Test
        void aResultSentWithTheCommitThatFindsNoRecordCommitsNothing() throws Exception {
            ManagedIdempotency<Connection> managed = ManagedIdempotency.of(engine(KeyPolicy.ofDefaults()),
                    JdbcTransactions.of(dataSource()));
            IdempotencyKey key = IdempotencyKey.of("iso", "managed-lost-record");
            assertThatThrownBy(() -> managed.execute(key, c -> {
                String receipt = work(c, key);
                try (Statement s = c.createStatement()) {
                    s.executeUpdate("DELETE FROM iso_record WHERE key_id = 'managed-lost-record'");
                }
                return receipt;
            })).isInstanceOf(IdempotencyStoreException.class).hasMessageContaining("claimed record was not found");
            assertThat(Tx.count(dataSource(), "SELECT COUNT(*) FROM iso_effect WHERE k = '" + key + "'")).isZero();
            assertThat(Tx.count(dataSource(), "SELECT COUNT(*) FROM iso_record WHERE key_id = 'managed-lost-record'")).isZero();
        }

        /**
         * The claim bounds its own lock wait by setting {@code lock_timeout} inside its statement, and
         * sets it back at the statement's end: after a claim that inserts, one that replays, and in
         * a later transaction, the caller's value (a {@code SET LOCAL} one, then the session's) is what
         * it was.
         */
        @Test
        void aClaimLeavesTheCallersLockTimeoutAsItWas() throws Exception {
            Idempotency<Connection> engine = engine(KeyPolicy.builder().lockTimeout(Duration.ofMillis(250)).build());
            IdempotencyKey key = IdempotencyKey.of("iso", "lock-timeout-untouched");
            Connection c = open(Connection.TRANSACTION_READ_COMMITTED);
            try {
                try (Statement s = c.createStatement()) {
                    s.execute("SET LOCAL lock_timeout = '4321ms'");
                }
                assertThat(engine.execute(key, c, () -> work(c, key)).isExecuted()).isTrue();
                assertThat(Tx.text(c, "SELECT current_setting('lock_timeout')")).as("after a claim that inserted").isEqualTo("4321ms");
                assertThat(engine.execute(key, c, () -> work(c, key)).status()).isEqualTo(Outcome.Status.REPLAYED);
                assertThat(Tx.text(c, "SELECT current_setting('lock_timeout')")).as("after a claim that found the record")
                        .isEqualTo("4321ms");
                c.commit();
                String sessions = Tx.text(c, "SELECT current_setting('lock_timeout')");
                assertThat(engine.execute(key, c, () -> work(c, key)).status()).isEqualTo(Outcome.Status.REPLAYED);
                assertThat(Tx.text(c, "SELECT current_setting('lock_timeout')")).as("the session's own").isEqualTo(sessions);
                c.commit();
            } finally {
                c.rollback();
                closeAndEvict(c);
            }
        }

        /**
         * In a transaction the library runs, the result waits for the {@code COMMIT}; a second execution
         * of the same key in that transaction must still find it recorded and replay it, not meet its own
         * record in progress.
         */
        @Test
        void aKeyExecutedTwiceInOneTransactionTheLibraryRunsReplaysTheSecondTime() throws Exception {
            Idempotency<Connection> engine = engine(KeyPolicy.ofDefaults());
            IdempotencyKey key = IdempotencyKey.of("iso", "twice-in-one-managed-transaction");
            List<Outcome<String>> outcomes = JdbcTransactions.of(dataSource()).inTransaction(c -> List.of(
                    engine.execute(key, c, () -> work(c, key)),
                    engine.execute(key, c, () -> work(c, key))));
            assertThat(outcomes.get(0).isExecuted()).isTrue();
            assertThat(outcomes.get(1).status()).isEqualTo(Outcome.Status.REPLAYED);
            assertThat(outcomes.get(1).value()).isEqualTo(outcomes.get(0).value());
            assertThat(Tx.count(dataSource(), "SELECT COUNT(*) FROM iso_record WHERE key_id = 'twice-in-one-managed-transaction'"
                    + " AND status = 'COMPLETED'")).isEqualTo(1);
            assertThat(executions).hasValue(1);
        }
    }

    /** Write-last mode ({@link AbstractWriteLastTest}), and its round trips on the wire. */
    @Nested
    class WriteLast extends AbstractWriteLastTest {
        WriteLast() {
            super(DB);
        }

        /**
         * A first execution costs the work's own round trips plus one, in which the record's
         * {@code INSERT} travels with the {@code COMMIT}: here two, the work's statement and that one.
         */
        @Test
        void aFirstExecutionSendsTheRecordWithTheCommitInOneRoundTrip() throws Exception {
            ManagedIdempotency<Connection> m = managed();
            IdempotencyKey warmUp = key();
            m.writeLast(warmUp, c -> effect(c, warmUp, "warm"));
            m.writeLast(warmUp, c -> effect(c, warmUp, "warm again"));
            IdempotencyKey key = key();
            Object[] outcome = new Object[1];
            int first = Isolation.roundTrips(() -> outcome[0] = m.writeLast(key, c -> effect(c, key, "v")));
            Object[] replay = new Object[1];
            int again = Isolation.roundTrips(() -> replay[0] = m.writeLast(key, c -> effect(c, key, "w")));
            System.out.printf("PostgreSQL wire (Sync messages), write-last: a first execution costs %d round trips, commit"
                    + " included; a replay %d%n", first, again);
            assertThat(outcome[0]).isInstanceOf(Outcome.Executed.class);
            assertThat(replay[0]).isInstanceOf(Outcome.Replayed.class);
            assertThat(first).isEqualTo(2);
            assertThat(effects(key)).isEqualTo(1);
            assertThat(record(key)).containsExactly("COMPLETED", "v");
        }

        /**
         * A lock timeout longer than PostgreSQL's {@code lock_timeout} maximum (about 24.8 days) is
         * bounded to that maximum, as the claim's is, not sent as a value the server refuses.
         */
        @Test
        void aLockTimeoutOverPostgresMaximumIsBoundedNotRefused() throws Exception {
            ManagedIdempotency<Connection> m = managed(java.time.InstantSource.system(), java.time.Duration.ofDays(30));
            IdempotencyKey key = key();
            assertThat(m.writeLast(key, c -> effect(c, key, "v")).isExecuted()).isTrue();
            assertThat(record(key)).containsExactly("COMPLETED", "v");
        }
    }

    /** The testkit's contract ({@link JdbcStoreContract}). */
    @Nested
    class Contract extends JdbcStoreContract {
        Contract() {
            super(DB);
        }
    }

    /** Lease mode and recovery phases ({@link AbstractLeaseModeTest}). */
    @Nested
    class LeaseMode extends AbstractLeaseModeTest {
        LeaseMode() {
            super(DB);
        }
    }

    /** The recovery worker ({@link AbstractRecoveryWorkerTest}). */
    @Nested
    class RecoveryWorker extends AbstractRecoveryWorkerTest {
        RecoveryWorker() {
            super(DB);
        }
    }
}
