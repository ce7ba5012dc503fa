package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.KeyPolicy;
import dev.idempotency.LeasedIdempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.ResultTooLargeException;
import dev.idempotency.TransactionConflictException;
import dev.idempotency.jdbc.kit.JdbcStoreContract;
import dev.idempotency.jdbc.lease.AbstractLeaseModeTest;
import dev.idempotency.jdbc.lease.AbstractRecoveryWorkerTest;
import dev.idempotency.testsupport.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** Every shared suite on the MariaDB server of the environment ({@link TestDatabase#MARIADB}), and what is MariaDB's alone. */
class MariaDbTest {

    static final TestDatabase DB = TestDatabase.MARIADB;

    /** What only a JDBC store can break ({@link AbstractJdbcStoreTest}), and MariaDB's packet limit. */
    @Nested
    class Store extends AbstractJdbcStoreTest {
        Store() {
            super(DB);
        }

        /** The server's default {@code max_allowed_packet}, and the policy's limit of the tests that reach it. */
        private static final int SIXTEEN_MIB = 16 * 1024 * 1024;

        /** Lease and write-last modes, whose policy accepts results (and recovery points) up to 16 MiB. */
        private ManagedIdempotency<Connection> managedUpTo16MiB() {
            return ManagedIdempotency.builder(engine(KeyPolicy.builder().maxResultBytes(SIXTEEN_MIB).build()),
                    JdbcTransactions.of(dataSource())).build();
        }

        private LeasedIdempotency<Connection> leasedUpTo16MiB() {
            return LeasedIdempotency.of(managedUpTo16MiB(), store);
        }

        /**
         * The policy accepts results up to 16 MiB; the server's default {@code max_allowed_packet} is
         * 16 MiB, so the statement that records a 16 MiB result is too large, and sending it would drop
         * the connection. It is refused before it is sent; a result that fits, even one that escaping
         * makes larger on the wire, is recorded.
         */
        @Test
        void aResultOverTheServersPacketLimitIsRefusedBeforeItIsSentAndTheConnectionSurvives() throws Exception {
            int sixteenMiB = 16 * 1024 * 1024;
            Idempotency<Connection> generous = engine(KeyPolicy.builder().maxResultBytes(sixteenMiB).build());
            long packet;
            try (Connection c = dataSource().getConnection(); Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT @@max_allowed_packet")) {
                rs.next();
                packet = rs.getLong(1);
            }
            assertThat(packet).as("the test server's max_allowed_packet (its default)").isLessThanOrEqualTo(sixteenMiB);
            IdempotencyKey key = key("over-the-packet");
            IdempotencyKey quoted = key("quotes-over-the-packet");
            try (Connection c = dataSource().getConnection()) {
                c.setAutoCommit(false);
                assertThatThrownBy(() -> generous.execute(key, c, () -> {
                    work(c, key);
                    return "x".repeat(sixteenMiB);
                })).isInstanceOf(ResultTooLargeException.class).isInstanceOf(ResultOverPacketLimitException.class)
                        .hasMessageContaining("max_allowed_packet of " + packet + " bytes")
                        .hasMessageContaining("nothing was sent")
                        .satisfies(e -> assertThat(((ResultTooLargeException) e).size()).isEqualTo(sixteenMiB))
                        .satisfies(e -> {
                            ResultOverPacketLimitException over = (ResultOverPacketLimitException) e;
                            assertThat(over.packetLimit()).isEqualTo(packet);
                            assertThat(over.limit()).isEqualTo((int) packet);
                            assertThat(over.statementBytes()).as("the documented bound: 1,024 bytes, the key and codec twice, the result")
                                    .isEqualTo(1024L + 2L * (key.scope().length() + key.id().length()
                                            + dev.idempotency.ResultCodec.string().name().length()) + sixteenMiB);
                            assertThat(over.getMessage()).as("names the key").contains(key.id())
                                    .contains("up to " + over.statementBytes() + " bytes");
                        });
                String quotes = "'".repeat(sixteenMiB / 2 + 1); // within the packet as bytes, over it once escaped
                assertThatThrownBy(() -> generous.execute(quoted, c, () -> quotes)).isInstanceOf(ResultOverPacketLimitException.class);
                assertThat(c.isValid(2)).as("the connection survives").isTrue();
                c.rollback();
                Outcome<String> retry = generous.execute(key, c, () -> "x".repeat(sixteenMiB / 2));
                c.commit();
                assertThat(retry.isExecuted()).isTrue();
            }
            assertThat(effects()).as("the refused attempt's work was rolled back").isZero();
            assertThat(Tx.commit(dataSource(), c -> generous.execute(key, c, () -> "not run")).value()).hasSize(sixteenMiB / 2);
            assertThat(records()).isEqualTo(1);
        }

        /**
         * Lease mode meets the same limit after the call has run: the completion over
         * {@code max_allowed_packet} is refused before it is sent (sending it would drop the connection
         * and leave the lease to end, and a retry to run the call again), and the engine records the
         * operation as failed, as for a result over the policy's limit: every retry gets that failure
         * back, and the call is not run again.
         */
        @Test
        void aLeasedResultOverThePacketLimitIsRecordedAsFailedAndTheCallIsNotRunAgain() {
            int sixteenMiB = SIXTEEN_MIB;
            LeasedIdempotency<Connection> managed = leasedUpTo16MiB();
            IdempotencyKey key = key("leased-over-the-packet");
            java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
            dev.idempotency.IdempotentCall<String> call = dev.idempotency.IdempotentCall.of(key, dev.idempotency.ResultCodec.string());
            assertThatThrownBy(() -> managed.lease(call, attempt -> {
                calls.incrementAndGet();
                return "x".repeat(sixteenMiB);
            })).isInstanceOf(ResultTooLargeException.class).hasCauseInstanceOf(ResultOverPacketLimitException.class)
                    .hasMessageContaining("over the server's max_allowed_packet")
                    .hasMessageContaining("the operation is recorded as failed")
                    .satisfies(e -> assertThat(((ResultTooLargeException) e).size()).isEqualTo(sixteenMiB));
            Outcome<String> retry = managed.lease(call, attempt -> {
                calls.incrementAndGet();
                return "small";
            });
            assertThat(retry.status()).as("the retry gets the recorded failure").isEqualTo(Outcome.Status.FAILED);
            assertThat(calls).as("the call ran once").hasValue(1);
        }

        /**
         * Lease mode's recovery point meets the same limit before the call: the checkpoint over
         * {@code max_allowed_packet} is refused before it is sent (sending it would drop the connection
         * and make every retry run the prepare again), the claim's transaction rolls back with the
         * prepare's writes, nothing of the key is recorded, the call does not run, and the next attempt
         * claims the key anew as its first attempt.
         */
        @Test
        void aRecoveryPointOverThePacketLimitRecordsNothingOfTheKeyAndTheCallDoesNotRun() throws Exception {
            int sixteenMiB = SIXTEEN_MIB;
            LeasedIdempotency<Connection> managed = leasedUpTo16MiB();
            IdempotencyKey key = key("recovery-point-over-the-packet");
            java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.atomic.AtomicInteger attempts = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.atomic.AtomicReference<String> prepareValue = new java.util.concurrent.atomic.AtomicReference<>(
                    "x".repeat(sixteenMiB));
            dev.idempotency.Phases<Connection, String, java.sql.SQLException> phases = dev.idempotency.Phases
                    .<Connection, String, java.sql.SQLException>prepare(c -> {
                        work(c, key);
                        return prepareValue.get();
                    }, dev.idempotency.ResultCodec.string())
                    .call((attempt, prepared) -> {
                        calls.incrementAndGet();
                        attempts.set(attempt.number());
                        return "called";
                    }).result(dev.idempotency.ResultCodec.string());
            assertThatThrownBy(() -> managed.run(key, phases)).isInstanceOfSatisfying(ResultTooLargeException.class, e -> {
                assertThat(e.reason()).as("names what was too large, and whose limit").startsWith("the recovery point")
                        .contains("over the server's max_allowed_packet");
                assertThat(e.getMessage()).contains("the claim's transaction was rolled back, the prepare's writes with it: nothing of"
                        + " the key was recorded, and the call did not run").doesNotContain("the encoded result");
                assertThat(e.getCause()).as("the store's own refusal").isInstanceOf(ResultOverPacketLimitException.class)
                        .hasMessageContaining("nothing was sent");
                assertThat(e.size()).isEqualTo(sixteenMiB);
            });
            assertThat(calls).as("the call did not run").hasValue(0);
            assertThat(records()).as("nothing of the key is recorded").isZero();
            assertThat(effects()).as("the prepare's writes rolled back").isZero();
            prepareValue.set("small");
            assertThat(managed.run(key, phases).isExecuted()).as("a retry claims the key anew, at once").isTrue();
            assertThat(attempts).as("as its first attempt").hasValue(1);
            assertThat(calls).hasValue(1);
        }

        /**
         * Write-last mode meets the same limit: the completed record over {@code max_allowed_packet} is
         * refused before it is sent, the work is rolled back, nothing is recorded, and the pool's
         * connection is still usable for the retry.
         */
        @Test
        void aWriteLastRecordOverThePacketLimitIsRefusedBeforeItIsSent() throws Exception {
            int sixteenMiB = SIXTEEN_MIB;
            ManagedIdempotency<Connection> managed = managedUpTo16MiB();
            IdempotencyKey key = key("write-last-over-the-packet");
            assertThatThrownBy(() -> managed.writeLast(key, c -> {
                work(c, key);
                return "x".repeat(sixteenMiB);
            })).isInstanceOf(ResultOverPacketLimitException.class).hasMessageContaining("nothing was sent");
            assertThat(effects()).as("the work was rolled back").isZero();
            assertThat(records()).as("nothing recorded").isZero();
            assertThat(managed.writeLast(key, c -> work(c, key)).isExecuted()).as("the retry runs and records").isTrue();
            assertThat(records()).isEqualTo(1);
        }

        /**
         * The statement limit is read once per physical connection by each store, and kept by that
         * store only: a second result on the same connection costs no read, a connection the store
         * has not used costs one, and another store reads it for itself (no state is shared between
         * stores, nor kept in the JVM at large). Every recorded value is checked, since the bound of
         * a statement is over 1 KiB, the smallest limit a server allows, whatever the value's size.
         */
        @Test
        void eachStoreReadsTheStatementLimitOncePerConnection() throws Exception {
            AtomicInteger statements = new AtomicInteger();
            JdbcIdempotencyStore own = JdbcIdempotencyStore.ofDefaults();
            Idempotency<Connection> engine = Idempotency.of(own);
            Idempotency<Connection> another = Idempotency.of(JdbcIdempotencyStore.ofDefaults());
            int[] costs = new int[5];
            try (Connection first = dataSource().getConnection(); Connection second = dataSource().getConnection()) {
                Connection[] onConnection = {first, first, first, second, first};
                for (int i = 0; i < costs.length; i++) {
                    Connection c = CountingConnection.wrap(onConnection[i], statements);
                    c.setAutoCommit(false);
                    Idempotency<Connection> by = i == 4 ? another : engine;
                    int before = statements.get();
                    assertThat(by.execute(key("limit-read-" + i), c, () -> "small").isExecuted()).isTrue();
                    costs[i] = statements.get() - before;
                    c.commit();
                }
            }
            int recorded = costs[2];
            assertThat(costs[1]).as("a second result on the same connection reads no limit").isEqualTo(recorded);
            assertThat(costs[3]).as("a connection the store has not used: one read").isEqualTo(recorded + 1);
            assertThat(costs[0]).as("the store's first use: its durability check and the limit").isGreaterThan(recorded + 1);
            assertThat(costs[4]).as("another store's first use, on a connection the first store has read: the same").isEqualTo(costs[0]);
        }

        /** A result whose statement is, by the documented bound, exactly the packet limit is recorded: only more is refused. */
        @Test
        void aResultWhoseStatementIsExactlyThePacketLimitIsRecorded() throws Exception {
            long packet;
            try (Connection c = dataSource().getConnection(); Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT @@max_allowed_packet")) {
                rs.next();
                packet = rs.getLong(1);
            }
            IdempotencyKey key = key("at-the-packet");
            int size = (int) (packet - 1024 - 2L * (key.scope().length() + key.id().length() + dev.idempotency.ResultCodec.string().name().length()));
            Idempotency<Connection> generous = engine(KeyPolicy.builder().maxResultBytes(size).build());
            assertThat(Tx.commit(dataSource(), c -> generous.execute(key, c, () -> "x".repeat(size))).isExecuted()).isTrue();
            assertThat(Tx.commit(dataSource(), c -> generous.execute(key, c, () -> "not run")).value()).hasSize(size);
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
     * MariaDB's own statement counter.
     */
    @Nested
    class Isolation extends AbstractIsolationTest {
        Isolation() {
            super(DB);
        }

        /** InnoDB's locking reads see the latest committed record whatever the snapshot. */
        @Override
        protected boolean staleSnapshotDuplicateConflicts(int isolation) {
            return false;
        }

        /**
         * Under REPEATABLE READ and SERIALIZABLE, InnoDB turns the locks that waited on a claim that rolls
         * back into gap locks, and all waiters but one become deadlock victims (1213); under READ
         * COMMITTED and READ UNCOMMITTED the claim waits in a locking read that leaves none, and the
         * waiters replay.
         */
        @Override
        protected boolean waitersOfARolledBackClaimMayConflict(int isolation) {
            return isolation >= Connection.TRANSACTION_REPEATABLE_READ;
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
            assertThat(cost[0]).isEqualTo(DB.statements().firstExecution());
            assertThat(cost[1]).isEqualTo(DB.statements().replay());
        }

        /** Under READ COMMITTED the claim waits in a locking read before it inserts: one statement more. */
        @Test
        void underReadCommittedAFirstExecutionCostsOneLockingReadMoreAndAReplayTheSame() throws Exception {
            long[] cost = serverCount(Connection.TRANSACTION_READ_COMMITTED, "questions-rc");
            assertThat(cost[0]).isEqualTo(DB.statements().firstExecution() + 1);
            assertThat(cost[1]).isEqualTo(DB.statements().replay());
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

    /** Write-last mode ({@link AbstractWriteLastTest}). */
    @Nested
    class WriteLast extends AbstractWriteLastTest {
        WriteLast() {
            super(DB);
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
