package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Fingerprint;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.KeyPolicy;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.ResultCodec;
import dev.idempotency.RetryPolicy;
import dev.idempotency.TransactionConflictException;
import dev.idempotency.testkit.TestClock;
import dev.idempotency.testsupport.LazyPool;
import dev.idempotency.testsupport.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Write-last mode ({@link ManagedIdempotency#writeLast}) end to end on a real database:
 * the work runs first and the record is written last, so a duplicate runs the work and rolls it
 * back before it answers. Written once, run on every database by a nested class of that
 * database's test class ({@code H2Test.WriteLast}, ...).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class AbstractWriteLastTest {

    static final String TABLE = "wl_record";

    private final LazyPool pool;
    protected final JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().table(TABLE).build();
    protected final AtomicInteger runs = new AtomicInteger();

    /** @param database the database under test: a pool on it is opened when the first test needs it */
    protected AbstractWriteLastTest(TestDatabase database) {
        this.pool = database.lazyPool("writelast");
    }

    /** @return the pool on the database under test */
    protected DataSource dataSource() {
        return pool.get();
    }

    /** Thrown by a work whose failure the policy declares final. */
    static final class Declined extends Exception {
        private static final long serialVersionUID = 1L;

        Declined(String message) {
            super(message);
        }
    }

    @BeforeEach
    void freshTables() throws SQLException {
        runs.set(0);
        store.createTableIfMissing(dataSource());
        try (Connection c = dataSource().getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(true);
            s.executeUpdate("DELETE FROM " + TABLE);
            try {
                s.executeUpdate("DELETE FROM wl_effect");
            } catch (SQLException missing) {
                if (!c.getAutoCommit()) {
                    c.rollback();
                }
                // No unique constraint: the table counts what committed, it does not prevent duplicates.
                s.executeUpdate("CREATE TABLE wl_effect (k VARCHAR(300) NOT NULL, v VARCHAR(100) NOT NULL)");
            }
        }
    }

    @AfterAll
    void close() {
        pool.close();
    }

    ManagedIdempotency<Connection> managed(InstantSource clock, Duration lockTimeout) {
        Idempotency<Connection> engine = Idempotency.builder(store).clock(clock)
                .keyPolicy(KeyPolicy.builder().finalFailures(Declined.class).retention(Duration.ofHours(1)).lockTimeout(lockTimeout).build())
                .build();
        return ManagedIdempotency.builder(engine, JdbcTransactions.of(dataSource()))
                .retryPolicy(RetryPolicy.builder().maxAttempts(20).backoff(Duration.ofMillis(1), Duration.ofMillis(50)).build()).build();
    }

    ManagedIdempotency<Connection> managed() {
        return managed(InstantSource.system(), Duration.ofSeconds(10));
    }

    static IdempotencyKey key() {
        return IdempotencyKey.of("wl", UUID.randomUUID().toString());
    }

    /** The business change: one row, whose value is the result. */
    String effect(Connection c, IdempotencyKey key, String value) throws SQLException {
        runs.incrementAndGet();
        try (PreparedStatement s = c.prepareStatement("INSERT INTO wl_effect (k, v) VALUES (?, ?)")) {
            s.setString(1, key.toString());
            s.setString(2, value);
            s.executeUpdate();
        }
        return value;
    }

    int effects(IdempotencyKey key) throws SQLException {
        return Tx.count(dataSource(), "SELECT COUNT(*) FROM wl_effect WHERE k = '" + key + "'");
    }

    /** @return the key's record as status and result text, or {@code null} */
    String[] record(IdempotencyKey key) throws SQLException {
        try (Connection c = dataSource().getConnection();
             PreparedStatement s = c.prepareStatement("SELECT status, result FROM " + TABLE + " WHERE scope = ? AND key_id = ?")) {
            s.setString(1, key.scope());
            s.setString(2, key.id());
            try (ResultSet rs = s.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                byte[] result = rs.getBytes(2);
                return new String[] {rs.getString(1), result == null ? null : new String(result, java.nio.charset.StandardCharsets.UTF_8)};
            }
        }
    }

    @Test
    void aFirstExecutionCommitsTheWorkWithTheRecordAndARetryRunsTheWorkRollsItBackAndReplays() throws Exception {
        ManagedIdempotency<Connection> m = managed();
        IdempotencyKey key = key();
        // tag::write-last[]
        Outcome<String> first = m.writeLast(key, c -> effect(c, key, "first")); // the work, then the record, one commit
        Outcome<String> retry = m.writeLast(key, c -> effect(c, key, "second")); // runs, is rolled back, replays "first"
        // end::write-last[]
        assertThat(first).isInstanceOf(Outcome.Executed.class).extracting(Outcome::value).isEqualTo("first");
        assertThat(retry).isInstanceOf(Outcome.Replayed.class).extracting(Outcome::value).isEqualTo("first");
        assertThat(runs).hasValue(2); // the retry ran the work, then rolled it back
        assertThat(effects(key)).isEqualTo(1);
        assertThat(record(key)).containsExactly("COMPLETED", "first");
    }

    @Test
    void aRecordOfTheNormalModeIsReplayedAndAWriteLastRecordAnswersTheNormalMode() throws Exception {
        ManagedIdempotency<Connection> m = managed();
        IdempotencyKey normalFirst = key();
        m.execute(normalFirst, c -> effect(c, normalFirst, "normal"));
        assertThat(m.writeLast(normalFirst, c -> effect(c, normalFirst, "late")).value()).isEqualTo("normal");
        IdempotencyKey lastFirst = key();
        m.writeLast(lastFirst, c -> effect(c, lastFirst, "last"));
        assertThat(m.execute(lastFirst, c -> effect(c, lastFirst, "late"))).isInstanceOf(Outcome.Replayed.class)
                .extracting(Outcome::value).isEqualTo("last");
        assertThat(effects(normalFirst)).isEqualTo(1);
        assertThat(effects(lastFirst)).isEqualTo(1);
    }

    @Test
    void anotherFingerprintIsAMismatchAndItsWorkIsRolledBack() throws Exception {
        ManagedIdempotency<Connection> m = managed();
        IdempotencyKey key = key();
        m.writeLast(IdempotentCall.of(key, ResultCodec.string()).withFingerprint(Fingerprint.of("order-1")), c -> effect(c, key, "first"));
        Outcome<String> other = m.writeLast(IdempotentCall.of(key, ResultCodec.string()).withFingerprint(Fingerprint.of("order-2")),
                c -> effect(c, key, "other"));
        assertThat(other).isInstanceOf(Outcome.Mismatch.class);
        assertThat(effects(key)).isEqualTo(1);
        assertThat(record(key)).containsExactly("COMPLETED", "first");
    }

    @Test
    void anExpiredRecordIsReplacedByTheWrite() throws Exception {
        TestClock clock = new TestClock(Instant.now());
        ManagedIdempotency<Connection> m = managed(clock, Duration.ofSeconds(10));
        IdempotencyKey key = key();
        m.writeLast(key, c -> effect(c, key, "old"));
        clock.advance(Duration.ofHours(2));
        Outcome<String> again = m.writeLast(key, c -> effect(c, key, "new"));
        assertThat(again).isInstanceOf(Outcome.Executed.class).extracting(Outcome::value).isEqualTo("new");
        assertThat(record(key)).containsExactly("COMPLETED", "new");
        assertThat(effects(key)).isEqualTo(2);
        assertThat(m.writeLast(key, c -> effect(c, key, "newer")).value()).isEqualTo("new");
    }

    @Test
    void aFinalFailureRollsTheWorkBackAndIsRecordedForEveryRetry() throws Exception {
        ManagedIdempotency<Connection> m = managed();
        IdempotencyKey key = key();
        Outcome<String> failed = m.writeLast(key, c -> {
            effect(c, key, "declined");
            throw new Declined("card declined");
        });
        assertThat(failed).isInstanceOfSatisfying(Outcome.Failed.class, f -> {
            assertThat(f.replayed()).isFalse();
            assertThat(f.errorMessage()).isEqualTo("card declined");
        });
        Outcome<String> retry = m.writeLast(key, c -> effect(c, key, "would succeed"));
        assertThat(retry).isInstanceOfSatisfying(Outcome.Failed.class, f -> assertThat(f.replayed()).isTrue());
        assertThat(effects(key)).isZero();
        assertThat(record(key)[0]).isEqualTo("FAILED");
    }

    @Test
    void anotherFailureRecordsNothingAndTheRetryRuns() throws Exception {
        ManagedIdempotency<Connection> m = managed();
        IdempotencyKey key = key();
        assertThatThrownBy(() -> m.writeLast(key, c -> {
            effect(c, key, "broken");
            throw new IllegalStateException("boom");
        })).isInstanceOf(IllegalStateException.class).hasMessage("boom");
        assertThat(record(key)).isNull();
        assertThat(effects(key)).isZero();
        assertThat(m.writeLast(key, c -> effect(c, key, "ok"))).isInstanceOf(Outcome.Executed.class);
        assertThat(effects(key)).isEqualTo(1);
    }

    /**
     * A key held by an open transaction (a claim of the normal mode, not committed) makes the write
     * wait, at most the lock timeout: the answer is {@code InProgress} while the holder is still
     * open, and the work is rolled back. Once the holder commits, the write replays its result.
     */
    @Test
    void aWriteThatWaitsForAnOpenHolderAnswersInProgressAfterTheLockTimeout() throws Exception {
        ManagedIdempotency<Connection> m = managed(InstantSource.system(), Duration.ofMillis(300));
        IdempotencyKey key = key();
        try (Connection holder = dataSource().getConnection()) {
            holder.setAutoCommit(false);
            assertThat(m.engine().execute(key, holder, () -> effect(holder, key, "holder"))).isInstanceOf(Outcome.Executed.class);
            CompletableFuture<Outcome<String>> waiting = CompletableFuture.supplyAsync(() -> {
                try {
                    return m.writeLast(key, c -> effect(c, key, "waiter"));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            Outcome<String> answer = waiting.get(60, TimeUnit.SECONDS);
            assertThat(answer).isInstanceOf(Outcome.InProgress.class);
            assertThat(holder.isClosed()).isFalse();
            holder.commit();
        }
        assertThat(m.writeLast(key, c -> effect(c, key, "after"))).isInstanceOf(Outcome.Replayed.class)
                .extracting(Outcome::value).isEqualTo("holder");
        assertThat(effects(key)).isEqualTo(1);
    }

    /** What one attempt of the concurrency test answered. */
    private record Answer(IdempotencyKey key, String attempted, Outcome<String> outcome, Throwable failure) {
    }

    /**
     * Many threads on a few keys, in both modes, with rollbacks injected (a work that throws after
     * its write to the business table, and a claim of the normal mode that holds the key and then
     * rolls back): each key's business row commits exactly once, with the record's result, every
     * answer agrees with that record, and no key is left in progress.
     */
    @Test
    void concurrentAttemptsOnOverlappingKeysCommitEachKeyExactlyOnce() throws Exception {
        ManagedIdempotency<Connection> m = managed();
        List<IdempotencyKey> keys = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            keys.add(key());
        }
        int threads = 8;
        int attemptsPerThread = Integer.getInteger("idempotency.writelast.attempts", 25);
        ConcurrentLinkedQueue<Answer> answers = new ConcurrentLinkedQueue<>();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                done.add(pool.submit(() -> {
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    for (int a = 0; a < attemptsPerThread; a++) {
                        IdempotencyKey key = keys.get(random.nextInt(keys.size()));
                        String value = "t" + thread + "-a" + a;
                        boolean fail = random.nextInt(5) == 0;
                        boolean normal = random.nextInt(5) == 0;
                        try {
                            Outcome<String> outcome = normal
                                    ? m.execute(key, c -> failingIf(fail, effect(c, key, value)))
                                    : m.writeLast(key, c -> failingIf(fail, effect(c, key, value)));
                            answers.add(new Answer(key, value, outcome, null));
                        } catch (Exception | Error e) {
                            answers.add(new Answer(key, value, null, e));
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(5, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }
        Map<IdempotencyKey, String> executed = new HashMap<>();
        for (Answer a : answers) {
            if (a.failure != null) {
                boolean injected = a.failure instanceof IllegalStateException && "injected".equals(a.failure.getMessage());
                assertThat(injected || a.failure instanceof TransactionConflictException)
                        .as("unexpected failure for %s: %s", a.key, a.failure).isTrue();
            } else if (a.outcome instanceof Outcome.Executed) {
                assertThat(executed.put(a.key, a.attempted)).as("a second first execution of %s", a.key).isNull();
            }
        }
        for (IdempotencyKey key : keys) {
            String[] record = record(key);
            if (record == null) {
                assertThat(executed).doesNotContainKey(key);
                assertThat(effects(key)).isZero();
                continue;
            }
            assertThat(record[0]).as("record of %s", key).isEqualTo("COMPLETED");
            assertThat(executed.get(key)).as("the attempt that executed %s", key).isEqualTo(record[1]);
            assertThat(effects(key)).as("committed business rows of %s", key).isEqualTo(1);
            assertThat(Tx.count(dataSource(), "SELECT COUNT(*) FROM wl_effect WHERE k = '" + key + "' AND v = '" + record[1] + "'"))
                    .isEqualTo(1);
        }
        for (Answer a : answers) {
            if (a.outcome instanceof Outcome.Replayed) {
                assertThat(a.outcome.value()).as("replay of %s", a.key).isEqualTo(executed.get(a.key));
            }
        }
        assertThat(executed).as("some key was executed").isNotEmpty();
    }

    private static String failingIf(boolean fail, String value) {
        if (fail) {
            throw new IllegalStateException("injected");
        }
        return value;
    }
}
