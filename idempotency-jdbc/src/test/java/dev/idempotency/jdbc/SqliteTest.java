package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Fingerprint;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.KeyPolicy;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.TransactionConflictException;
import dev.idempotency.jdbc.kit.JdbcStoreContract;
import dev.idempotency.jdbc.lease.AbstractLeaseModeTest;
import dev.idempotency.jdbc.lease.AbstractRecoveryWorkerTest;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.testkit.TestClock;
import dev.idempotency.testsupport.TestDatabase;
import dev.idempotency.testsupport.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Every shared suite on SQLite in a file in write-ahead-log mode ({@link TestDatabase#SQLITE}), and what is SQLite's alone. */
class SqliteTest {

    static final TestDatabase DB = TestDatabase.SQLITE;

    /**
     * What only a JDBC store can break ({@link AbstractJdbcStoreTest}), and SQLite's WAL mode, busy
     * timeout and exact keys.
     */
    @Nested
    class Store extends AbstractJdbcStoreTest {
        Store() {
            super(DB);
        }

        @Test
        void theDatabaseRunsInWalModeWithABusyTimeout() throws Exception {
            try (Connection c = dataSource().getConnection(); Statement s = c.createStatement()) {
                try (ResultSet rs = s.executeQuery("PRAGMA journal_mode")) {
                    rs.next();
                    assertThat(rs.getString(1)).isEqualToIgnoringCase("wal");
                }
                try (ResultSet rs = s.executeQuery("PRAGMA busy_timeout")) {
                    rs.next();
                    assertThat(rs.getInt(1)).isEqualTo(10_000);
                }
            }
        }

        @Test
        void theClaimsLockTimeoutLeavesTheConnectionsBusyTimeoutAsItWas() throws Exception {
            IdempotencyKey key = key("busy-timeout");
            Tx.commit(dataSource(), c -> {
                idem.execute(key, c, () -> "r");
                try (ResultSet rs = c.createStatement().executeQuery("PRAGMA busy_timeout")) {
                    rs.next();
                    return assertThat(rs.getInt(1)).isEqualTo(10_000);
                }
            });
        }

        @Test
        void keysThatDifferOnlyByATrailingSpaceAreDistinct() throws Exception {
            // The key policy refuses spaces, so this goes through the store's SPI.
            for (String id : new String[] {"k", "k ", "k  "}) {
                Claim claim = Tx.commit(dataSource(), c -> store.claim(c, new ClaimRequest(IdempotencyKey.of("exact", id),
                        Fingerprint.NONE, clock.instant(), clock.instant().plusSeconds(60), Duration.ofSeconds(1))));
                assertThat(claim).as("claim of '%s'", id).isInstanceOf(Claim.Acquired.class);
            }
            assertThat(records()).isEqualTo(3);
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
     * Concurrent duplicates on SQLite, which has one isolation level (SERIALIZABLE: one writer at a time),
     * in both transaction modes a caller may configure: the driver's default deferred transactions, and
     * {@code transaction_mode=IMMEDIATE}, where each transaction takes the write lock when it begins. Each
     * test has a database file of its own.
     */
    @Nested
    class Isolation {

        private final TestClock clock = new TestClock(Instant.parse("2026-04-04T13:30:00.123Z"));
        private final JdbcIdempotencyStore store = JdbcIdempotencyStore.ofDefaults();
        private final Idempotency<Connection> idem = Idempotency.builder(store)
                .keyPolicy(KeyPolicy.builder().lockTimeout(Duration.ofSeconds(10)).build()).clock(clock).build();
        private final AtomicInteger executions = new AtomicInteger();
        private final List<HikariDataSource> pools = new ArrayList<>();
        private final List<Path> dirs = new ArrayList<>();

        private HikariDataSource database(String mode) throws Exception {
            Path dir = Files.createTempDirectory("idempotency-sqlite-isolation");
            dirs.add(dir);
            HikariDataSource ds = TestDatabases.pool(TestDatabases.sqliteUrl(dir.resolve("isolation.db"), "&transaction_mode=" + mode),
                    null, null, 16);
            pools.add(ds);
            store.createTableIfMissing(ds);
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                s.execute("CREATE TABLE effect (k VARCHAR(400) NOT NULL, note VARCHAR(100))");
            }
            return ds;
        }

        @AfterEach
        void close() throws Exception {
            pools.forEach(HikariDataSource::close);
            for (Path dir : dirs) {
                TestDatabase.deleteDirectory(dir);
            }
        }

        private String work(Connection c, IdempotencyKey key) throws SQLException {
            return DuplicateClients.insertEffect(executions, c, key);
        }

        @ParameterizedTest
        @ValueSource(strings = {"DEFERRED", "IMMEDIATE"})
        void concurrentDuplicatesRunOncePerKeyAndEveryFailureIsRetryable(String mode) throws Exception {
            HikariDataSource ds = database(mode);
            DuplicateClients.concurrentDuplicates(ds, -1, idem, this::work, "SQLite " + mode);
            try (Connection c = ds.getConnection()) {
                assertThat(c.getTransactionIsolation()).isEqualTo(Connection.TRANSACTION_SERIALIZABLE);
            }
        }

        @Test
        void deferred_aTransactionThatReadFirstCannotWaitForTheWriterAndGetsInProgressThenReplaysOnRetry() throws Exception {
            HikariDataSource ds = database("DEFERRED");
            IdempotencyKey key = IdempotencyKey.of("iso", "read-first");
            try (Connection first = ds.getConnection(); Connection second = ds.getConnection()) {
                first.setAutoCommit(false);
                second.setAutoCommit(false);
                idem.execute(key, first, () -> work(first, key));
                second.createStatement().executeQuery("SELECT COUNT(*) FROM effect").close(); // a read snapshot
                long started = System.nanoTime();
                Outcome<String> blocked = idem.execute(key, second, () -> work(second, key));
                assertThat(blocked).isEqualTo(new Outcome.InProgress<>(key));
                assertThat(Duration.ofNanos(System.nanoTime() - started)).as("no wait is possible").isLessThan(Duration.ofSeconds(2));
                second.rollback();
                first.commit();
            }
            Outcome<String> retry = Tx.commit(ds, c -> idem.execute(key, c, () -> work(c, key)));
            assertThat(retry.status()).isEqualTo(Outcome.Status.REPLAYED);
            assertThat(retry.value()).isEqualTo("receipt-1");
        }

        @Test
        void deferred_aTransactionWhoseSnapshotIsStaleGetsARetryableConflictThenReplaysOnRetry() throws Exception {
            HikariDataSource ds = database("DEFERRED");
            IdempotencyKey key = IdempotencyKey.of("iso", "stale");
            try (Connection second = ds.getConnection()) {
                second.setAutoCommit(false);
                second.createStatement().executeQuery("SELECT COUNT(*) FROM effect").close(); // a read snapshot
                Tx.commit(ds, c -> idem.execute(key, c, () -> work(c, key)));
                assertThatThrownBy(() -> idem.execute(key, second, () -> work(second, key)))
                        .isInstanceOf(TransactionConflictException.class)
                        .satisfies(e -> assertThat(RetryableFailures.isRetryable(e)).isTrue());
                second.rollback();
            }
            Outcome<String> retry = Tx.commit(ds, c -> idem.execute(key, c, () -> work(c, key)));
            assertThat(retry.status()).isEqualTo(Outcome.Status.REPLAYED);
            assertThat(executions).hasValue(1);
        }

        @Test
        void immediate_aDuplicateQueuesWhenItBeginsAndReplays_aCommittedConnectionHoldsTheLockUntilClosed() throws Exception {
            HikariDataSource ds = database("IMMEDIATE");
            IdempotencyKey key = IdempotencyKey.of("iso", "immediate");
            ExecutorService thread = Executors.newSingleThreadExecutor();
            try {
                Future<Outcome<String>> second;
                try (Connection first = ds.getConnection()) {
                    first.setAutoCommit(false);
                    idem.execute(key, first, () -> work(first, key));
                    second = thread.submit(() -> Tx.commit(ds, c -> idem.execute(key, c, () -> work(c, key))));
                    Thread.sleep(300);
                    assertThat(second).as("waits in setAutoCommit(false): BEGIN IMMEDIATE").isNotDone();
                    first.commit();
                    Thread.sleep(300);
                    assertThat(second).as("the driver began the next IMMEDIATE transaction on commit").isNotDone();
                } // returned to the pool: HikariCP restores auto-commit, which ends that transaction
                Outcome<String> outcome = second.get(10, TimeUnit.SECONDS);
                assertThat(outcome.status()).isEqualTo(Outcome.Status.REPLAYED);
                assertThat(outcome.value()).isEqualTo("receipt-1");
            } finally {
                thread.shutdownNow();
            }
            assertThat(executions).hasValue(1);
        }

        @Test
        void inANonUtcZoneTheExpiryIsExactToTheMillisecond() throws Exception {
            assertThat(ZoneId.systemDefault()).isEqualTo(ZoneId.of("Pacific/Chatham"));
            HikariDataSource ds = database("DEFERRED");
            DuplicateClients.expiryIsExactToTheMillisecond(ds, store, clock, executions, this::work);
        }
    }

    /** Write-last mode ({@link AbstractWriteLastTest}), whose single writer turns every conflict into a wait. */
    @Nested
    class WriteLast extends AbstractWriteLastTest {
        WriteLast() {
            super(DB);
        }

        /**
         * On SQLite the work's own first write already waits for the holder's write lock, bounded by the
         * connection's {@code busy_timeout}, not by the policy's lock timeout (which bounds only the
         * library's statements): the waiter goes on once the holder commits, and replays its result.
         */
        @Override
        @Test
        void aWriteThatWaitsForAnOpenHolderAnswersInProgressAfterTheLockTimeout() throws Exception {
            ManagedIdempotency<Connection> m = managed(InstantSource.system(), Duration.ofMillis(300));
            IdempotencyKey key = key();
            CompletableFuture<Outcome<String>> waiting;
            try (Connection holder = dataSource().getConnection()) {
                holder.setAutoCommit(false);
                assertThat(m.engine().execute(key, holder, () -> effect(holder, key, "holder"))).isInstanceOf(Outcome.Executed.class);
                waiting = CompletableFuture.supplyAsync(() -> {
                    try {
                        return m.writeLast(key, c -> effect(c, key, "waiter"));
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                holder.commit();
            }
            assertThat(waiting.get(60, TimeUnit.SECONDS)).isInstanceOf(Outcome.Replayed.class).extracting(Outcome::value).isEqualTo("holder");
            assertThat(effects(key)).isEqualTo(1);
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
