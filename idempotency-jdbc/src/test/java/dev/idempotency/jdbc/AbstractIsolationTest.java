package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyException;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.KeyPolicy;
import dev.idempotency.Outcome;
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
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TimeZone;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * How the store behaves under each isolation level, with the database session in another time
 * zone than the JVM, and when a lock wait runs out; and what a claim costs in statements. Written
 * once, run on every database by a nested class of that database's test class ({@code H2Test.Isolation},
 * ...), given its {@link TestDatabase}; the nested class answers what differs by level. Uses tables of its own
 * ({@code iso_record}, {@code iso_effect}, {@code iso_anchor}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class AbstractIsolationTest {

    /** The database under test, and every fact about it the tests ask. */
    protected final TestDatabase database;

    private final LazyPool pool;

    /** @param database the database under test: a pool on it is opened when the first test needs it */
    protected AbstractIsolationTest(TestDatabase database) {
        this.database = database;
        this.pool = database.lazyPool("isolation");
    }

    /** @return the pool on the database under test */
    protected HikariDataSource dataSource() {
        return pool.get();
    }

    /** @return the isolation levels the database offers, as {@link Connection} constants */
    protected List<Integer> isolationLevels() {
        return database.isolationLevels();
    }

    /**
     * @param isolation a level from {@link #isolationLevels()}
     * @return whether a duplicate that another transaction claimed and committed after this
     *     transaction's snapshot was taken is reported as a {@link TransactionConflictException}
     *     ({@code true}) or replayed at once ({@code false})
     */
    protected abstract boolean staleSnapshotDuplicateConflicts(int isolation);

    /**
     * @param isolation a level from {@link #isolationLevels()}
     * @return whether a duplicate whose claim waited for another transaction's open claim, which
     *     then committed, is reported as a {@link TransactionConflictException} ({@code true}) or
     *     replays ({@code false}); by default as {@link #staleSnapshotDuplicateConflicts(int)}
     */
    protected boolean waitedDuplicateConflicts(int isolation) {
        return staleSnapshotDuplicateConflicts(isolation);
    }

    /**
     * @param isolation a level from {@link #isolationLevels()}
     * @return whether, when a claim's holder rolls back while several duplicates wait for it, the
     *     waiters that do not win may get a {@link TransactionConflictException} (a deadlock, a
     *     serialization failure) instead of replaying the winner; by default as
     *     {@link #waitedDuplicateConflicts(int)}
     */
    protected boolean waitersOfARolledBackClaimMayConflict(int isolation) {
        return waitedDuplicateConflicts(isolation);
    }

    /** @return the statement that sets the session's time zone to {@link #sessionZone()} */
    protected abstract String setSessionTimeZone();

    /** @return a query whose single value is the session's time zone, as the database names it */
    protected abstract String showSessionTimeZone();

    /** @return the zone, neither UTC nor the JVM's, that {@link #setSessionTimeZone()} sets */
    protected String sessionZone() {
        return "Asia/Kathmandu";
    }

    /**
     * Sets session settings that the lock timeout could disturb to unusual values.
     *
     * @param s a statement on the session, in auto-commit mode
     * @throws SQLException if that fails
     */
    protected abstract void setUnusualSessionSettings(Statement s) throws SQLException;

    /** @return a query returning, in one row, the session settings that the lock timeout must leave unchanged */
    protected abstract String sessionSettingsQuery();

    /** @return whether the caller's transaction is still usable after a lock wait ran out */
    protected boolean transactionUsableAfterLockTimeout() {
        return database.transactionUsableAfterLockTimeout();
    }

    /** Starts 15 minutes before daylight saving time ends in Pacific/Chatham (2026-04-04T14:00Z, 03:45 local). */
    protected final TestClock clock = new TestClock(Instant.parse("2026-04-04T13:44:59.987Z"));
    protected final JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().table("iso_record").build();
    protected final AtomicInteger executions = new AtomicInteger();

    @BeforeEach
    void resetTables() throws Exception {
        store.createTableIfMissing(dataSource());
        try (Connection c = dataSource().getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(true);
            for (String ddl : List.of("CREATE TABLE iso_effect (k VARCHAR(400) NOT NULL, note VARCHAR(100))",
                    "CREATE TABLE iso_anchor (id INTEGER NOT NULL PRIMARY KEY)")) {
                try {
                    s.execute(ddl);
                } catch (SQLException alreadyThere) {
                    // created by an earlier test
                }
            }
            s.execute("DELETE FROM iso_effect");
            s.execute("DELETE FROM iso_record");
            s.execute("DELETE FROM iso_anchor");
            s.execute("INSERT INTO iso_anchor (id) VALUES (1)");
        }
        executions.set(0);
    }

    @AfterAll
    void close() {
        pool.close();
    }

    protected Idempotency<Connection> engine(KeyPolicy policy) {
        return Idempotency.builder(store).keyPolicy(policy).clock(clock).build();
    }

    /** The business change; a database failure in it is marked, to tell it from the library's. */
    protected String work(Connection c, IdempotencyKey key) {
        int n = executions.incrementAndGet();
        try (PreparedStatement s = c.prepareStatement("INSERT INTO iso_effect (k, note) VALUES (?, ?)")) {
            s.setString(1, key.toString());
            s.setString(2, "execution " + n);
            s.executeUpdate();
        } catch (SQLException e) {
            throw new WorkFailed(e);
        }
        return "receipt-" + n;
    }

    protected Stream<Integer> levels() {
        return isolationLevels().stream();
    }

    protected static String levelName(int isolation) {
        return switch (isolation) {
            case Connection.TRANSACTION_READ_UNCOMMITTED -> "READ UNCOMMITTED";
            case Connection.TRANSACTION_READ_COMMITTED -> "READ COMMITTED";
            case Connection.TRANSACTION_REPEATABLE_READ -> "REPEATABLE READ";
            case Connection.TRANSACTION_SERIALIZABLE -> "SERIALIZABLE";
            default -> "level " + isolation;
        };
    }

    /** @param isolation the level @return a pooled connection in a transaction at that level */
    protected Connection open(int isolation) throws SQLException {
        Connection c = dataSource().getConnection();
        c.setAutoCommit(false);
        c.setTransactionIsolation(isolation);
        return c;
    }

    /**
     * A client's randomised back-off before retrying a failed transaction: without it, attempts that
     * deadlock each other (MariaDB under SERIALIZABLE) can restart in lockstep and starve.
     */
    private static void backOff(int round) throws InterruptedException {
        Thread.sleep(java.util.concurrent.ThreadLocalRandom.current().nextInt(1, 10 + 5 * Math.min(round, 20)));
    }

    private int count(String sql) throws SQLException {
        return Tx.count(dataSource(), sql);
    }

    // ---- concurrent duplicates under each isolation level -------------------------------------------

    @ParameterizedTest(name = "{displayName} [{0}]")
    @MethodSource("levels")
    void concurrentDuplicatesRunOncePerKeyAndEveryRetryReplays(int isolation) throws Exception {
        int keys = 6;
        int attempts = 6;
        Idempotency<Connection> engine = engine(KeyPolicy.builder().lockTimeout(Duration.ofSeconds(10)).build());
        Map<IdempotencyKey, AtomicInteger> committedRuns = new ConcurrentHashMap<>();
        Map<IdempotencyKey, Set<String>> values = new ConcurrentHashMap<>();
        Map<String, AtomicInteger> failures = new ConcurrentHashMap<>();
        AtomicInteger retriedThenReplayed = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(12);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int k = 0; k < keys; k++) {
                IdempotencyKey key = IdempotencyKey.of("iso", "dup-" + isolation + "-" + k);
                CountDownLatch start = new CountDownLatch(1);
                for (int a = 0; a < attempts; a++) {
                    futures.add(pool.submit(() -> {
                        start.await();
                        boolean retried = false;
                        for (int round = 0; round < 60; round++) {
                            boolean[] ran = {false};
                            Outcome<String> o;
                            try (Connection c = open(isolation)) {
                                try {
                                    o = engine.execute(key, c, () -> {
                                        ran[0] = true;
                                        return work(c, key);
                                    });
                                } catch (WorkFailed e) {
                                    c.rollback();
                                    assertThat(RetryableFailures.isRetryable(e.getCause())).as("the work's own failure %s", e.getCause()).isTrue();
                                    failures.computeIfAbsent("work: " + e.getCause().getSQLState(), x -> new AtomicInteger()).incrementAndGet();
                                    retried = true;
                                    backOff(round);
                                    continue;
                                } catch (RuntimeException e) {
                                    c.rollback();
                                    assertThat(e).as("what execute threw").isInstanceOf(IdempotencyException.class);
                                    assertThat(((IdempotencyException) e).isRetryable()).as("retryable: %s", e).isTrue();
                                    assertThat(RetryableFailures.isRetryable(e)).isTrue();
                                    failures.computeIfAbsent("execute: " + e.getClass().getSimpleName(), x -> new AtomicInteger()).incrementAndGet();
                                    retried = true;
                                    backOff(round);
                                    continue;
                                }
                                try {
                                    c.commit();
                                } catch (SQLException e) {
                                    assertThat(RetryableFailures.isRetryable(e)).as("a commit failure: %s", e).isTrue();
                                    c.rollback();
                                    failures.computeIfAbsent("commit: " + e.getSQLState(), x -> new AtomicInteger()).incrementAndGet();
                                    retried = true;
                                    backOff(round);
                                    continue;
                                }
                            }
                            if (ran[0]) {
                                committedRuns.computeIfAbsent(key, x -> new AtomicInteger()).incrementAndGet();
                            }
                            if (o.hasValue()) {
                                values.computeIfAbsent(key, x -> ConcurrentHashMap.newKeySet()).add(o.value());
                                if (retried && o.isReplay()) {
                                    retriedThenReplayed.incrementAndGet();
                                }
                                return null;
                            }
                            assertThat(o.status()).isEqualTo(Outcome.Status.IN_PROGRESS);
                            retried = true;
                            Thread.sleep(5);
                        }
                        return fail("no value for " + key + " after 60 rounds");
                    }));
                }
                start.countDown();
            }
            for (Future<?> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        System.out.printf("%s %s: %d keys x %d attempts; retried failures %s; %d retried attempts then replayed%n",
                getClass().getSimpleName(), levelName(isolation), keys, attempts, failures, retriedThenReplayed.get());
        assertThat(committedRuns).hasSize(keys);
        committedRuns.forEach((key, n) -> assertThat(n.get()).as("committed executions of %s", key).isEqualTo(1));
        values.forEach((key, v) -> assertThat(v).as("values seen for %s", key).hasSize(1));
        assertThat(count("SELECT COUNT(*) FROM iso_effect")).isEqualTo(keys);
        assertThat(count("SELECT COUNT(*) FROM iso_record")).isEqualTo(keys);
    }

    @ParameterizedTest(name = "{displayName} [{0}]")
    @MethodSource("levels")
    void aDuplicateCommittedAfterTheSnapshotIsATypedConflictOrAReplayAndTheRetryReplays(int isolation) throws Exception {
        Idempotency<Connection> engine = engine(KeyPolicy.ofDefaults());
        IdempotencyKey key = IdempotencyKey.of("iso", "stale-" + isolation);
        try (Connection late = open(isolation)) {
            count(late, "SELECT COUNT(*) FROM iso_anchor"); // takes this transaction's snapshot
            Outcome<String> first = Tx.commit(dataSource(), c -> engine.execute(key, c, () -> work(c, key)));
            assertThat(first.isExecuted()).isTrue();
            if (staleSnapshotDuplicateConflicts(isolation)) {
                assertThatThrownBy(() -> engine.execute(key, late, () -> work(late, key)))
                        .isInstanceOf(TransactionConflictException.class)
                        .satisfies(e -> assertThat(((TransactionConflictException) e).isRetryable()).isTrue())
                        .satisfies(e -> assertThat(RetryableFailures.isRetryable(e)).isTrue())
                        .hasMessageContaining(key.id());
                late.rollback();
                Outcome<String> retry = engine.execute(key, late, () -> work(late, key));
                late.commit();
                assertThat(retry.status()).isEqualTo(Outcome.Status.REPLAYED);
                assertThat(retry.value()).isEqualTo(first.value());
            } else {
                Outcome<String> o = engine.execute(key, late, () -> work(late, key));
                late.commit();
                assertThat(o.status()).isEqualTo(Outcome.Status.REPLAYED);
                assertThat(o.value()).isEqualTo(first.value());
            }
        }
        assertThat(executions).hasValue(1);
    }

    @ParameterizedTest(name = "{displayName} [{0}]")
    @MethodSource("levels")
    void aDuplicateThatWaitedForAClaimThatCommitsIsATypedConflictOrAReplay(int isolation) throws Exception {
        Idempotency<Connection> engine = engine(KeyPolicy.ofDefaults());
        IdempotencyKey key = IdempotencyKey.of("iso", "waited-" + isolation);
        try (Connection holder = open(Connection.TRANSACTION_READ_COMMITTED)) {
            assertThat(engine.execute(key, holder, () -> work(holder, key)).isExecuted()).isTrue();
            waitThenExpectReplayOrConflict(engine, key, isolation, holder, "receipt-1");
        }
        assertThat(executions).hasValue(1);
    }

    @ParameterizedTest(name = "{displayName} [{0}]")
    @MethodSource("levels")
    void anExpiredRecordTakenOverConcurrentlyRunsOnceAndTheLoserReplaysOrConflicts(int isolation) throws Exception {
        Idempotency<Connection> engine = engine(KeyPolicy.ofDefaults());
        IdempotencyKey key = IdempotencyKey.of("iso", "taken-over-" + isolation);
        Tx.commit(dataSource(), c -> engine.execute(key, c, () -> work(c, key)));
        clock.advance(KeyPolicy.DEFAULT_RETENTION);
        try (Connection holder = open(Connection.TRANSACTION_READ_COMMITTED)) {
            assertThat(engine.execute(key, holder, () -> work(holder, key))).isEqualTo(new Outcome.Executed<>(key, "receipt-2"));
            waitThenExpectReplayOrConflict(engine, key, isolation, holder, "receipt-2");
        }
        assertThat(executions).hasValue(2);
        assertThat(count("SELECT COUNT(*) FROM iso_record")).isEqualTo(1);
    }

    @Test
    void anExpiredRecordWhoseTakeOverRollsBackIsTakenOverByTheWaiter() throws Exception {
        Idempotency<Connection> engine = engine(KeyPolicy.ofDefaults());
        IdempotencyKey key = IdempotencyKey.of("iso", "take-over-rolled-back");
        Tx.commit(dataSource(), c -> engine.execute(key, c, () -> work(c, key)));
        clock.advance(KeyPolicy.DEFAULT_RETENTION.plusMillis(1));
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (Connection holder = open(Connection.TRANSACTION_READ_COMMITTED)) {
            assertThat(engine.execute(key, holder, () -> work(holder, key)).isExecuted()).isTrue();
            Future<Outcome<String>> waiter = pool.submit(() -> Tx.commit(dataSource(), c -> engine.execute(key, c, () -> work(c, key))));
            Thread.sleep(300);
            assertThat(waiter).as("the waiter waits for the open take-over").isNotDone();
            holder.rollback();
            assertThat(waiter.get(10, TimeUnit.SECONDS)).isEqualTo(new Outcome.Executed<>(key, "receipt-3"));
        } finally {
            pool.shutdownNow();
        }
        Outcome<String> after = Tx.commit(dataSource(), c -> engine.execute(key, c, () -> work(c, key)));
        assertThat(after.value()).isEqualTo("receipt-3");
        assertThat(count("SELECT COUNT(*) FROM iso_effect")).isEqualTo(2);
    }

    /**
     * Under READ UNCOMMITTED a plain read sees another transaction's uncommitted rows: here a record
     * whose work ran and completed in a transaction that has not committed, and then rolls back. A
     * claim at READ UNCOMMITTED must not replay that result, whose effect never commits; as at READ
     * COMMITTED it waits for the open claim, and runs the work itself once the holder rolls back.
     */
    @Test
    void aClaimAtReadUncommittedNeverReplaysAResultThatWasNotCommitted() throws Exception {
        Assumptions.assumeTrue(isolationLevels().contains(Connection.TRANSACTION_READ_UNCOMMITTED),
                "this database offers no READ UNCOMMITTED");
        Idempotency<Connection> engine = engine(KeyPolicy.builder().lockTimeout(Duration.ofSeconds(10)).build());
        IdempotencyKey key = IdempotencyKey.of("iso", "completed-not-committed");
        ExecutorService pool = Executors.newSingleThreadExecutor();
        Outcome<String> answered;
        boolean answeredBeforeTheRollback;
        try (Connection holder = open(Connection.TRANSACTION_READ_COMMITTED);
             Connection waiter = open(Connection.TRANSACTION_READ_UNCOMMITTED)) {
            try {
                assertThat(engine.execute(key, holder, () -> work(holder, key))).isEqualTo(new Outcome.Executed<>(key, "receipt-1"));
                Future<Outcome<String>> second = pool.submit(() -> engine.execute(key, waiter, () -> work(waiter, key)));
                Thread.sleep(300);
                answeredBeforeTheRollback = second.isDone();
                holder.rollback();
                answered = second.get(10, TimeUnit.SECONDS);
                waiter.commit();
            } finally {
                waiter.rollback();
                holder.rollback();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(answered).as("the READ UNCOMMITTED claim's answer (given %s the holder rolled back)",
                answeredBeforeTheRollback ? "before" : "after").isEqualTo(new Outcome.Executed<>(key, "receipt-2"));
        assertThat(count("SELECT COUNT(*) FROM iso_effect")).as("committed effects").isEqualTo(1);
        Outcome<String> retry = Tx.commit(dataSource(), c -> engine.execute(key, c, () -> work(c, key)));
        assertThat(retry.status()).isEqualTo(Outcome.Status.REPLAYED);
        assertThat(retry.value()).isEqualTo("receipt-2");
    }

    @ParameterizedTest(name = "{displayName} [{0}]")
    @MethodSource("levels")
    void aClaimThatRollsBackWithThreeWaitersLetsExactlyOneRunAndTheOthersReplayOrConflict(int isolation) throws Exception {
        Idempotency<Connection> engine = engine(KeyPolicy.builder().lockTimeout(Duration.ofSeconds(10)).build());
        IdempotencyKey key = IdempotencyKey.of("iso", "rolled-back-" + isolation);
        int waiters = 3;
        ExecutorService pool = Executors.newFixedThreadPool(waiters);
        List<Future<String>> firstAttempts = new ArrayList<>();
        Map<String, String> values = new ConcurrentHashMap<>();
        try (Connection holder = open(Connection.TRANSACTION_READ_COMMITTED)) {
            assertThat(engine.execute(key, holder, () -> work(holder, key)).isExecuted()).isTrue();
            for (int w = 0; w < waiters; w++) {
                String name = "waiter-" + w;
                firstAttempts.add(pool.submit(() -> {
                    String first = null;
                    for (int round = 0; round < 20; round++) {
                        try (Connection c = open(isolation)) {
                            try {
                                Outcome<String> o = engine.execute(key, c, () -> work(c, key));
                                c.commit();
                                values.put(name, o.value());
                                return first != null ? first : o.status().name();
                            } catch (TransactionConflictException e) {
                                c.rollback();
                                assertThat(RetryableFailures.isRetryable(e)).isTrue();
                                first = first != null ? first : "CONFLICT";
                                backOff(round);
                            }
                        }
                    }
                    return fail("no value for " + name + " after 20 rounds");
                }));
            }
            Thread.sleep(500);
            assertThat(firstAttempts).as("every waiter waits for the open claim").noneMatch(Future::isDone);
            holder.rollback();
        }
        List<String> outcomes = new ArrayList<>();
        try {
            for (Future<String> f : firstAttempts) {
                outcomes.add(f.get(30, TimeUnit.SECONDS));
            }
        } finally {
            pool.shutdownNow();
        }
        System.out.printf("%s %s: a claim rolled back under %d waiters; their first attempts: %s%n",
                getClass().getSimpleName(), levelName(isolation), waiters, outcomes);
        assertThat(executions).as("the holder's execution and one waiter's").hasValue(2);
        assertThat(count("SELECT COUNT(*) FROM iso_effect")).isEqualTo(1);
        assertThat(outcomes).filteredOn("EXECUTED"::equals).hasSize(1);
        assertThat(outcomes).filteredOn(o -> !o.equals("EXECUTED"))
                .allMatch(o -> o.equals("REPLAYED") || waitersOfARolledBackClaimMayConflict(isolation) && o.equals("CONFLICT"),
                        "REPLAYED" + (waitersOfARolledBackClaimMayConflict(isolation) ? " or CONFLICT" : ""));
        assertThat(Set.copyOf(values.values())).as("every waiter ends with the winner's result").containsExactly("receipt-2");
    }

    // ---- purge -----------------------------------------------------------------------------------------

    @Test
    void purgeNeverDeletesARecordThatAConcurrentTransactionTookOver() throws Exception {
        Idempotency<Connection> engine = engine(KeyPolicy.ofDefaults());
        IdempotencyKey key = IdempotencyKey.of("iso", "purged-while-taken-over");
        Tx.commit(dataSource(), c -> engine.execute(key, c, () -> work(c, key)));
        clock.advance(KeyPolicy.DEFAULT_RETENTION);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (Connection holder = open(Connection.TRANSACTION_READ_COMMITTED)) {
            assertThat(engine.execute(key, holder, () -> work(holder, key)).isExecuted()).isTrue();
            Future<Integer> purge = pool.submit(() -> Tx.commit(dataSource(), c -> engine.purgeExpired(c, 10)));
            Thread.sleep(300);
            holder.commit();
            assertThat(purge.get(10, TimeUnit.SECONDS)).isZero();
        } finally {
            pool.shutdownNow();
        }
        Outcome<String> retry = Tx.commit(dataSource(), c -> engine.execute(key, c, () -> work(c, key)));
        assertThat(retry.status()).isEqualTo(Outcome.Status.REPLAYED);
        assertThat(retry.value()).isEqualTo("receipt-2");
    }

    /** A second attempt at {@code isolation} waits for {@code holder}'s open claim, which then commits. */
    private void waitThenExpectReplayOrConflict(Idempotency<Connection> engine, IdempotencyKey key, int isolation,
                                                Connection holder, String winner) throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (Connection waiter = open(isolation)) {
            Future<Outcome<String>> second = pool.submit(() -> engine.execute(key, waiter, () -> work(waiter, key)));
            Thread.sleep(300);
            assertThat(second).as("the second attempt waits for the open claim").isNotDone();
            holder.commit();
            if (waitedDuplicateConflicts(isolation)) {
                assertThatThrownBy(() -> second.get(10, TimeUnit.SECONDS)).cause()
                        .isInstanceOf(TransactionConflictException.class)
                        .satisfies(e -> assertThat(RetryableFailures.isRetryable(e)).isTrue());
                waiter.rollback();
                Outcome<String> retry = engine.execute(key, waiter, () -> work(waiter, key));
                waiter.commit();
                assertThat(retry.status()).isEqualTo(Outcome.Status.REPLAYED);
                assertThat(retry.value()).isEqualTo(winner);
            } else {
                Outcome<String> o = second.get(10, TimeUnit.SECONDS);
                waiter.commit();
                assertThat(o.status()).isEqualTo(Outcome.Status.REPLAYED);
                assertThat(o.value()).isEqualTo(winner);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static int count(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getInt(1);
        }
    }

    // ---- time zones ------------------------------------------------------------------------------------

    @Test
    void retentionAndExpiryAreExactToTheMillisecondWithTheSessionInAnotherTimeZone() throws Exception {
        ZoneId jvm = ZoneId.systemDefault();
        assertThat(jvm.getId()).as("the JVM's zone (surefire sets it)").isNotIn("UTC", "Z", "GMT", "Etc/UTC");
        assertThat(sessionZone()).isNotEqualTo(jvm.getId());
        assertThat(TimeZone.getDefault().getRawOffset()).isNotEqualTo(ZoneId.of(sessionZone()).getRules()
                .getOffset(clock.instant()).getTotalSeconds() * 1000);
        Duration retention = Duration.ofHours(1).plusMillis(7); // the window spans the JVM zone's DST change
        Idempotency<Connection> engine = engine(KeyPolicy.builder().retention(retention).build());
        IdempotencyKey key = IdempotencyKey.of("iso", "zoned");
        Instant t0 = clock.instant();
        Connection c = dataSource().getConnection();
        try {
            try {
                c.setAutoCommit(true);
                try (Statement s = c.createStatement()) {
                    s.execute(setSessionTimeZone());
                }
                c.setAutoCommit(false);
                assertThat(runIn(c, engine, key)).isEqualTo(new Outcome.Executed<>(key, "receipt-1"));
                try (Statement s = c.createStatement();
                     ResultSet rs = s.executeQuery("SELECT created_at, completed_at, expires_at FROM iso_record")) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getLong(1)).isEqualTo(t0.toEpochMilli());
                    assertThat(rs.getLong(2)).isEqualTo(t0.toEpochMilli());
                    assertThat(rs.getLong(3)).isEqualTo(t0.plus(retention).toEpochMilli());
                }
                c.commit();

                clock.advance(retention.minusMillis(1));
                Outcome<String> justBefore = runIn(c, engine, key);
                assertThat(justBefore.status()).isEqualTo(Outcome.Status.REPLAYED);
                assertThat(((Outcome.Replayed<String>) justBefore).recordedAt()).isEqualTo(t0);
                assertThat(engine.purgeExpired(c, 100)).as("purged 1 ms before expiry").isZero();
                c.commit();

                clock.advance(Duration.ofMillis(1));
                Instant t1 = clock.instant();
                assertThat(runIn(c, engine, key)).as("at expiry the key is new").isEqualTo(new Outcome.Executed<>(key, "receipt-2"));
                clock.advance(retention.minusMillis(1));
                assertThat(runIn(c, engine, key).value()).isEqualTo("receipt-2");
                assertThat(engine.purgeExpired(c, 100)).isZero();
                c.commit();
                clock.advance(Duration.ofMillis(1));
                assertThat(engine.purgeExpired(c, 100)).as("purged at expiry").isEqualTo(1);
                c.commit();
                assertThat(t1).isEqualTo(t0.plus(retention));

                try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(showSessionTimeZone())) {
                    rs.next();
                    assertThat(rs.getString(1)).as("the session's zone throughout").isIn(sessionZone(), "+05:45");
                }
                c.commit();
            } finally {
                c.rollback();
            }
        } finally {
            closeAndEvict(c);
        }
        assertThat(executions).hasValue(2);
    }

    /** Closes a connection whose session settings a test changed, and keeps it out of the pool. */
    protected void closeAndEvict(Connection c) throws SQLException {
        c.close();
        dataSource().evictConnection(c);
    }

    private Outcome<String> runIn(Connection c, Idempotency<Connection> engine, IdempotencyKey key) throws SQLException {
        Outcome<String> o = engine.execute(key, c, () -> work(c, key));
        c.commit();
        return o;
    }

    // ---- lock timeout ---------------------------------------------------------------------------------

    @Test
    void aLockWaitThatRunsOutGivesInProgressAfterThePolicysTimeoutAndLeavesTheSessionAsItWas() throws Exception {
        Duration timeout = Duration.ofSeconds(1);
        Idempotency<Connection> impatient = engine(KeyPolicy.builder().lockTimeout(timeout).build());
        IdempotencyKey key = IdempotencyKey.of("iso", "held");
        Connection waiter = dataSource().getConnection();
        try (Connection holder = open(Connection.TRANSACTION_READ_COMMITTED)) {
            try {
                assertThat(impatient.execute(key, holder, () -> work(holder, key)).isExecuted()).isTrue();
                waiter.setAutoCommit(true);
                try (Statement s = waiter.createStatement()) {
                    setUnusualSessionSettings(s);
                }
                String before = settings(waiter);
                waiter.setAutoCommit(false);
                IdempotencyKey mine = IdempotencyKey.of("iso", "waiter-own-change");
                work(waiter, mine);

                long started = System.nanoTime();
                Outcome<String> o = impatient.execute(key, waiter, () -> work(waiter, key));
                long waitedMillis = (System.nanoTime() - started) / 1_000_000;
                System.out.printf("%s: InProgress after %d ms (lock timeout %s)%n", getClass().getSimpleName(), waitedMillis, timeout);
                assertThat(o).isEqualTo(new Outcome.InProgress<>(key));
                assertThat(waitedMillis).as("waited for the policy's timeout").isBetween(timeout.toMillis() - 50, timeout.toMillis() + 1500);

                boolean usable;
                try (Statement s = waiter.createStatement();
                     ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM iso_effect WHERE k = '" + mine + "'")) {
                    rs.next();
                    assertThat(rs.getInt(1)).as("the waiter's own earlier change survives").isEqualTo(1);
                    usable = true;
                } catch (SQLException aborted) {
                    usable = false;
                }
                assertThat(usable).as("transaction usable after the lock timeout").isEqualTo(transactionUsableAfterLockTimeout());
                waiter.rollback();
                waiter.setAutoCommit(true);
                assertThat(settings(waiter)).as("session settings after the lock timeout").isEqualTo(before);
                waiter.setAutoCommit(false);

                holder.commit();
                Outcome<String> later = impatient.execute(key, waiter, () -> work(waiter, key));
                waiter.commit();
                assertThat(later.status()).isEqualTo(Outcome.Status.REPLAYED);
            } finally {
                waiter.rollback();
            }
        } finally {
            closeAndEvict(waiter);
        }
        assertThat(executions).hasValue(2); // the holder's execution and the waiter's own change
    }

    private String settings(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sessionSettingsQuery())) {
            rs.next();
            StringBuilder b = new StringBuilder();
            for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                b.append(rs.getMetaData().getColumnLabel(i)).append('=').append(rs.getString(i)).append(' ');
            }
            return b.toString().trim();
        }
    }

    // ---- cost ----------------------------------------------------------------------------------------

    /** The work's own database failure, marked so that the test tells it from the library's. */
    protected static final class WorkFailed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        WorkFailed(SQLException cause) {
            super(cause);
        }

        @Override
        public synchronized SQLException getCause() {
            return (SQLException) super.getCause();
        }
    }

    /** @return whether the dialect bounds a claim's lock wait to the millisecond (else in whole seconds, as documented) */
    protected boolean lockWaitsEndToTheMillisecond() {
        return database.lockWaitsEndToTheMillisecond();
    }

    /**
     * The claim's lock wait ends at the policy's timeout in milliseconds, not rounded up to a second:
     * a claimer with 300 ms meets a holder that stays open, and gets {@code InProgress} well before a
     * second has passed. Only where {@link #lockWaitsEndToTheMillisecond()}.
     */
    @Test
    void aClaimsLockWaitEndsAtThePolicysMilliseconds() throws Exception {
        Assumptions.assumeTrue(lockWaitsEndToTheMillisecond(), "this database bounds lock waits in whole seconds");
        Idempotency<Connection> patient = engine(KeyPolicy.ofDefaults());
        Idempotency<Connection> impatient = engine(KeyPolicy.builder().lockTimeout(Duration.ofMillis(300)).build());
        IdempotencyKey key = IdempotencyKey.of("iso", "lock-timeout-millis");
        try (Connection holder = open(Connection.TRANSACTION_READ_COMMITTED);
             Connection waiter = open(Connection.TRANSACTION_READ_COMMITTED)) {
            try {
                assertThat(patient.execute(key, holder, () -> work(holder, key)).isExecuted()).isTrue();
                long started = System.nanoTime();
                Outcome<String> o = impatient.execute(key, waiter, () -> work(waiter, key));
                long waitedMillis = (System.nanoTime() - started) / 1_000_000;
                assertThat(o).isEqualTo(new Outcome.InProgress<>(key));
                assertThat(waitedMillis).as("waited the policy's 300 ms, not a whole second").isBetween(250L, 990L);
            } finally {
                waiter.rollback();
                holder.rollback();
            }
        }
        assertThat(executions).hasValue(1);
    }
}
