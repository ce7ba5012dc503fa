package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.KeyPolicy;
import dev.idempotency.Outcome;
import dev.idempotency.testkit.TestClock;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
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
import org.slf4j.LoggerFactory;

/**
 * Retrying clients of concurrent duplicates, and the exact expiry across a change of daylight saving
 * time, for the databases whose isolation suites do not extend {@link AbstractIsolationTest}
 * (SQLite, HSQLDB). Stateless: every method works on what it is given.
 */
final class DuplicateClients {

    private DuplicateClients() {
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
        LoggerFactory.getLogger(DuplicateClients.class).info("{}: {} failures retried: {}", label, failures.size(),
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

    /**
     * The business change the suites count: one row in {@code effect}, and a receipt naming the
     * execution.
     */
    static String insertEffect(AtomicInteger executions, Connection c, IdempotencyKey key) throws SQLException {
        int n = executions.incrementAndGet();
        try (PreparedStatement s = c.prepareStatement("INSERT INTO effect (k, note) VALUES (?, ?)")) {
            s.setString(1, key.toString());
            s.setString(2, "execution " + n);
            s.executeUpdate();
        }
        return "receipt-" + n;
    }
}
