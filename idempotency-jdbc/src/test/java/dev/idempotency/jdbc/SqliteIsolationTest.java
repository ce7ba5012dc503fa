package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.KeyPolicy;
import dev.idempotency.Outcome;
import dev.idempotency.TransactionConflictException;
import dev.idempotency.testkit.TestClock;
import dev.idempotency.testsupport.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.LoggerFactory;

/**
 * Concurrent duplicates on SQLite, which has one isolation level (SERIALIZABLE: one writer at a
 * time), in both transaction modes a caller may configure: the driver's default deferred
 * transactions, and {@code transaction_mode=IMMEDIATE}, where each transaction takes the write lock
 * when it begins. Each test has a database file of its own.
 */
class SqliteIsolationTest {

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
            SqliteStoreTest.deleteDirectory(dir);
        }
    }

    private String work(Connection c, IdempotencyKey key) throws SQLException {
        int n = executions.incrementAndGet();
        try (PreparedStatement s = c.prepareStatement("INSERT INTO effect (k, note) VALUES (?, ?)")) {
            s.setString(1, key.toString());
            s.setString(2, "execution " + n);
            s.executeUpdate();
        }
        return "receipt-" + n;
    }

    @ParameterizedTest
    @ValueSource(strings = {"DEFERRED", "IMMEDIATE"})
    void concurrentDuplicatesRunOncePerKeyAndEveryFailureIsRetryable(String mode) throws Exception {
        HikariDataSource ds = database(mode);
        concurrentDuplicates(ds, -1, idem, this::work, "SQLite " + mode);
        try (Connection c = ds.getConnection()) {
            assertThat(c.getTransactionIsolation()).isEqualTo(Connection.TRANSACTION_SERIALIZABLE);
        }
    }

    /**
     * 12 threads, 30 keys, 6 retrying clients per key, in transactions at {@code isolation} (or the
     * connection's own if negative): each key's work commits exactly once, every client gets that
     * execution's value, and every failure on the way was retryable.
     */
    static void concurrentDuplicates(HikariDataSource ds, int isolation, Idempotency<Connection> idem, Work work, String label)
            throws Exception {
        int keys = 30;
        Map<IdempotencyKey, AtomicInteger> runs = new ConcurrentHashMap<>();
        Map<IdempotencyKey, Set<String>> seen = new ConcurrentHashMap<>();
        Queue<Exception> failures = new ConcurrentLinkedQueue<>();
        ExecutorService threads = Executors.newFixedThreadPool(12);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int k = 0; k < keys; k++) {
                IdempotencyKey key = IdempotencyKey.of("iso-" + isolation, "k-" + k);
                for (int a = 0; a < 6; a++) {
                    futures.add(threads.submit(() -> seen.computeIfAbsent(key, x -> ConcurrentHashMap.newKeySet())
                            .add(client(ds, isolation, idem, key, work, runs, failures))));
                }
            }
            for (Future<?> f : futures) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            threads.shutdownNow();
        }
        LoggerFactory.getLogger(SqliteIsolationTest.class).info("{}: {} failures retried: {}", label, failures.size(),
                failures.stream().map(e -> e.getClass().getSimpleName()).distinct().toList());
        assertThat(runs).hasSize(keys);
        runs.forEach((key, n) -> assertThat(n.get()).as("committed executions of %s", key).isEqualTo(1));
        seen.forEach((key, values) -> assertThat(values).as("values seen for %s", key).hasSize(1));
        assertThat(Tx.count(ds, "SELECT COUNT(*) FROM effect WHERE k LIKE 'iso-" + isolation + "/%'")).isEqualTo(keys);
    }

    /**
     * A client that retries, as after a timeout, on InProgress or a retryable failure (and only
     * then), in transactions at {@code isolation} (or the connection's own if negative).
     *
     * @return the value it finally got
     */
    static String client(HikariDataSource ds, int isolation, Idempotency<Connection> idem, IdempotencyKey key, Work work,
                         Map<IdempotencyKey, AtomicInteger> runs, Queue<Exception> failures) throws Exception {
        for (int round = 0; round < 500; round++) {
            boolean[] ran = {false};
            try (Connection c = ds.getConnection()) {
                c.setAutoCommit(false);
                if (isolation >= 0) {
                    c.setTransactionIsolation(isolation);
                }
                try {
                    Outcome<String> o = idem.execute(key, c, () -> {
                        ran[0] = true;
                        return work.run(c, key);
                    });
                    c.commit();
                    if (ran[0]) {
                        runs.computeIfAbsent(key, x -> new AtomicInteger()).incrementAndGet();
                    }
                    if (o.hasValue()) {
                        return o.value();
                    }
                } catch (Exception e) {
                    c.rollback();
                    failures.add(e);
                    assertThat(RetryableFailures.isRetryable(e)).as("retryable: %s", e).isTrue();
                }
            }
            Thread.sleep(java.util.concurrent.ThreadLocalRandom.current().nextInt(1, 8)); // jittered back-off
        }
        throw new AssertionError("no value for " + key + " after 500 rounds");
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
        expiryIsExactToTheMillisecond(ds, store, clock, executions, this::work);
    }

    interface Work {
        String run(Connection c, IdempotencyKey key) throws SQLException;
    }

    /**
     * Records a key at a time with milliseconds, across the end of daylight saving time in
     * Pacific/Chatham (2026-04-05 03:45 local, 2026-04-04T14:00Z), and checks the stored expiry and
     * the replay or re-run on either side of it.
     */
    static void expiryIsExactToTheMillisecond(HikariDataSource ds, JdbcIdempotencyStore store, TestClock clock,
                                              AtomicInteger executions, Work work) throws Exception {
        Duration retention = Duration.ofHours(1);
        Idempotency<Connection> hourly = Idempotency.builder(store).keyPolicy(KeyPolicy.builder().retention(retention).build())
                .clock(clock).build();
        IdempotencyKey key = IdempotencyKey.of("zone", "chatham");
        Instant start = clock.instant();
        Tx.commit(ds, c -> hourly.execute(key, c, () -> work.run(c, key)));
        try (Connection c = ds.getConnection();
             ResultSet rs = c.createStatement().executeQuery("SELECT created_at, expires_at FROM " + store.table()
                     + " WHERE key_id = 'chatham'")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getLong(1)).isEqualTo(start.toEpochMilli());
            assertThat(rs.getLong(2)).isEqualTo(start.plus(retention).toEpochMilli());
        }
        clock.advance(retention.minusMillis(1));
        assertThat(Tx.commit(ds, c -> hourly.execute(key, c, () -> work.run(c, key))).status()).isEqualTo(Outcome.Status.REPLAYED);
        clock.advance(Duration.ofMillis(1));
        assertThat(Tx.commit(ds, c -> hourly.execute(key, c, () -> work.run(c, key))).status()).isEqualTo(Outcome.Status.EXECUTED);
        assertThat(executions).hasValue(2);
    }
}
