package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Fingerprint;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.KeyPolicy;
import dev.idempotency.Outcome;
import dev.idempotency.TransactionConflictException;
import dev.idempotency.jdbc.kit.JdbcStoreContract;
import dev.idempotency.jdbc.lease.AbstractLeaseModeTest;
import dev.idempotency.jdbc.lease.AbstractRecoveryWorkerTest;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.testkit.TestClock;
import dev.idempotency.testsupport.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Every shared suite on in-memory HSQLDB in MVCC mode ({@link TestDatabase#HSQLDB}), and what is HSQLDB's alone. */
class HsqldbTest {

    static final TestDatabase DB = TestDatabase.HSQLDB;

    /** What only a JDBC store can break ({@link AbstractJdbcStoreTest}), and HSQLDB's PAD SPACE comparison. */
    @Nested
    class Store extends AbstractJdbcStoreTest {
        Store() {
            super(DB);
        }

        @Test
        void textComparesWithPadSpaceByDefaultSoKeysEndingInASpaceAreRefused() throws Exception {
            Tx.commit(dataSource(), c -> idem.execute(key("k"), c, () -> "k's result"));
            assertThat(Tx.count(dataSource(), "SELECT COUNT(*) FROM " + store.table() + " WHERE key_id = 'k '"))
                    .as("the stored key 'k' matches 'k '").isEqualTo(1);
            for (IdempotencyKey padded : new IdempotencyKey[] {IdempotencyKey.of("tenant-1", "k "), IdempotencyKey.of("tenant-1 ", "k")}) {
                assertThatThrownBy(() -> Tx.rollback(dataSource(), c -> store.claim(c, new ClaimRequest(padded, Fingerprint.NONE,
                        clock.instant(), clock.instant().plusSeconds(60), Duration.ofSeconds(1)))))
                        .isInstanceOf(IdempotencyStoreException.class).cause().hasMessageContaining("PAD SPACE");
            }
            assertThat(records()).isEqualTo(1);
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
     * Concurrent duplicates under each isolation level HSQLDB offers: READ COMMITTED waits for the open
     * claim; REPEATABLE READ and SERIALIZABLE (the same snapshot isolation in MVCC) fail at once with a
     * retryable serialization failure.
     */
    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class Isolation {

        private static final int RC = Connection.TRANSACTION_READ_COMMITTED;

        private final TestClock clock = new TestClock(Instant.parse("2026-04-04T13:30:00.123Z"));
        private final JdbcIdempotencyStore store = JdbcIdempotencyStore.ofDefaults();
        private final Idempotency<Connection> idem = Idempotency.builder(store)
                .keyPolicy(KeyPolicy.builder().lockTimeout(Duration.ofSeconds(10)).build()).clock(clock).build();
        private final AtomicInteger executions = new AtomicInteger();
        private final HikariDataSource ds = DB.pool("isolation", 16);

        @BeforeEach
        void reset() throws Exception {
            store.createTableIfMissing(ds);
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                s.execute("CREATE TABLE IF NOT EXISTS effect (k VARCHAR(400) NOT NULL, note VARCHAR(100))");
                s.execute("DELETE FROM effect");
                s.execute("DELETE FROM " + store.table());
            }
            executions.set(0);
        }

        @AfterAll
        void close() {
            ds.close();
        }

        private String work(Connection c, IdempotencyKey key) throws SQLException {
            return DuplicateClients.insertEffect(executions, c, key);
        }

        @ParameterizedTest
        @ValueSource(ints = {Connection.TRANSACTION_READ_COMMITTED, Connection.TRANSACTION_REPEATABLE_READ,
                Connection.TRANSACTION_SERIALIZABLE})
        void concurrentDuplicatesRunOncePerKeyAndEveryFailureIsRetryable(int isolation) throws Exception {
            DuplicateClients.concurrentDuplicates(ds, isolation, idem, this::work, "HSQLDB isolation " + isolation);
        }

        @ParameterizedTest
        @ValueSource(ints = {Connection.TRANSACTION_READ_COMMITTED, Connection.TRANSACTION_REPEATABLE_READ,
                Connection.TRANSACTION_SERIALIZABLE})
        void aDuplicateOfAnOpenClaimReplaysOnceItCommits_waitingOrAfterARetry(int isolation) throws Exception {
            IdempotencyKey key = IdempotencyKey.of("iso", "open-" + isolation);
            Outcome<String> second = duplicateOfAnOpenClaim(key, isolation, Connection::commit);
            assertThat(second.status()).isEqualTo(Outcome.Status.REPLAYED);
            assertThat(second.value()).isEqualTo("receipt-1");
            assertThat(executions).hasValue(1);
        }

        @ParameterizedTest
        @ValueSource(ints = {Connection.TRANSACTION_READ_COMMITTED, Connection.TRANSACTION_REPEATABLE_READ,
                Connection.TRANSACTION_SERIALIZABLE})
        void aDuplicateOfAnOpenClaimRunsOnceItRollsBack_waitingOrAfterARetry(int isolation) throws Exception {
            IdempotencyKey key = IdempotencyKey.of("iso", "rolled-back-" + isolation);
            Outcome<String> second = duplicateOfAnOpenClaim(key, isolation, Connection::rollback);
            assertThat(second).isEqualTo(new Outcome.Executed<>(key, "receipt-2"));
            assertThat(Tx.count(ds, "SELECT COUNT(*) FROM effect")).isEqualTo(1);
        }

        interface End {
            void end(Connection c) throws SQLException;
        }

        /**
         * A first transaction claims the key and stays open; a second, at {@code isolation}, tries the
         * key: under READ COMMITTED it waits until the first ends; above, it fails at once with a
         * retryable conflict, and its retry after the first ended is returned.
         */
        private Outcome<String> duplicateOfAnOpenClaim(IdempotencyKey key, int isolation, End end) throws Exception {
            ExecutorService thread = Executors.newSingleThreadExecutor();
            try (Connection first = ds.getConnection()) {
                first.setAutoCommit(false);
                idem.execute(key, first, () -> work(first, key));
                if (isolation == RC) {
                    Future<Outcome<String>> second = thread.submit(() -> inTx(isolation, key));
                    Thread.sleep(300);
                    assertThat(second).as("waits for the open claim").isNotDone();
                    end.end(first);
                    return second.get(10, TimeUnit.SECONDS);
                }
                assertThatThrownBy(() -> inTx(isolation, key)).isInstanceOf(TransactionConflictException.class)
                        .satisfies(e -> assertThat(RetryableFailures.isRetryable(e)).isTrue());
                end.end(first);
                return inTx(isolation, key);
            } finally {
                thread.shutdownNow();
            }
        }

        private Outcome<String> inTx(int isolation, IdempotencyKey key) throws Exception {
            try (Connection c = ds.getConnection()) {
                c.setAutoCommit(false);
                c.setTransactionIsolation(isolation);
                try {
                    Outcome<String> o = idem.execute(key, c, () -> work(c, key));
                    c.commit();
                    return o;
                } catch (Exception e) {
                    c.rollback();
                    throw e;
                }
            }
        }

        @Test
        void hsqldbIgnoresTheQueryTimeoutWhileAStatementWaits_soTheDialectCancelsIt() throws Exception {
            ExecutorService thread = Executors.newSingleThreadExecutor();
            Tx.commit(ds, c -> c.createStatement().executeUpdate("INSERT INTO effect (k) VALUES ('held')"));
            try (Connection first = ds.getConnection(); Connection second = ds.getConnection()) {
                first.setAutoCommit(false);
                second.setAutoCommit(false);
                first.createStatement().executeUpdate("UPDATE effect SET note = 'first' WHERE k = 'held'");
                Future<Integer> waiting = thread.submit(() -> {
                    try (PreparedStatement s = second.prepareStatement("UPDATE effect SET note = 'second' WHERE k = 'held'")) {
                        s.setQueryTimeout(1);
                        return s.executeUpdate();
                    }
                });
                Thread.sleep(2_500);
                assertThat(waiting).as("still waiting after more than twice the query timeout").isNotDone();
                first.rollback();
                assertThat(waiting.get(10, TimeUnit.SECONDS)).isEqualTo(1);
                second.rollback();
            } finally {
                thread.shutdownNow();
            }
        }

        @Test
        void inANonUtcZoneTheExpiryIsExactToTheMillisecond() throws Exception {
            assertThat(ZoneId.systemDefault()).isEqualTo(ZoneId.of("Pacific/Chatham"));
            DuplicateClients.expiryIsExactToTheMillisecond(ds, store, clock, executions, this::work);
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
