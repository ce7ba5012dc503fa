package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.BatchJob;
import dev.idempotency.DuplicateKeyInChunkException;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.JobProgress;
import dev.idempotency.JobResult;
import dev.idempotency.KeyPolicy;
import dev.idempotency.ChunkWork;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.ResultCodec;
import dev.idempotency.RetryPolicy;
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
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Chunks of a batch job (docs/contract.md, section 9) on a real database: {@code executeChunk} in
 * the caller's transaction, in the library's, and {@link BatchJob}; written once, run on every
 * database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class AbstractChunkTest {

    static final String TABLE = "idempotency_chunk";

    /** The database under test, and every fact about it the tests ask. */
    protected final TestDatabase database;

    private final LazyPool pool;

    /** @param database the database under test: a pool on it is opened when the first test needs it */
    protected AbstractChunkTest(TestDatabase database) {
        this.database = database;
        this.pool = database.lazyPool("chunk");
    }

    /** @return the pool on the database under test */
    protected DataSource dataSource() {
        return pool.get();
    }

    /** Thrown for an invalid instruction: declared final. */
    static final class Rejected extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Rejected(String message) {
            super(message);
        }
    }

    protected final TestClock clock = new TestClock(Instant.parse("2026-03-29T01:30:00Z"));
    protected final JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().table(TABLE).build();
    protected final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    protected Idempotency<Connection> idem;

    @BeforeEach
    void fresh() throws SQLException {
        store.createTableIfMissing(dataSource());
        try (Connection c = dataSource().getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(true);
            s.executeUpdate("DELETE FROM " + TABLE);
            try {
                s.executeUpdate("DELETE FROM chunk_ledger");
            } catch (SQLException missing) {
                s.executeUpdate("CREATE TABLE chunk_ledger (item VARCHAR(64) NOT NULL, amount INTEGER NOT NULL)");
            }
        }
        runs.clear();
        idem = Idempotency.builder(store).clock(clock)
                .keyPolicy(KeyPolicy.builder().retention(Duration.ofDays(7)).finalFailures(Rejected.class).build()).build();
    }

    @AfterAll
    void close() {
        pool.close();
    }

    static List<String> items(int from, int to) {
        return IntStream.range(from, to).mapToObj(i -> String.format("item-%05d", i)).collect(Collectors.toList());
    }

    static IdempotencyKey key(String item) {
        return IdempotencyKey.of("ledger", item);
    }

    /** @return the call of an item booked with {@link #book}: its key, its result an {@code Integer} */
    static IdempotentCall<Integer> booking(String item) {
        return IdempotentCall.of(key(item), ResultCodec.integer());
    }

    /** The work for one item: a ledger row, and its amount as the result. */
    int book(Connection c, String item) throws SQLException {
        runs.computeIfAbsent(item, i -> new AtomicInteger()).incrementAndGet();
        if (item.endsWith("-rejected")) {
            throw new Rejected("instruction " + item + " is invalid");
        }
        int amount = Integer.parseInt(item.replaceAll("\\D", "").isEmpty() ? "0" : item.replaceAll("\\D", ""));
        try (PreparedStatement s = c.prepareStatement("INSERT INTO chunk_ledger (item, amount) VALUES (?, ?)")) {
            s.setString(1, item);
            s.setInt(2, amount);
            s.executeUpdate();
        }
        return amount;
    }

    List<Outcome<Integer>> chunk(List<String> items, boolean commit) throws SQLException {
        try (Connection c = dataSource().getConnection()) {
            c.setAutoCommit(false);
            try {
                List<Outcome<Integer>> outcomes = idem.executeChunk(c, items, AbstractChunkTest::booking,
                        item -> book(c, item));
                if (commit) {
                    c.commit();
                } else {
                    c.rollback();
                }
                return outcomes;
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            }
        }
    }

    @Test
    void aChunkRunsEachNewItemOnceInInputOrderAndARerunReplaysItWithoutRunning() throws Exception {
        List<String> items = items(0, 20);
        Collections.reverse(items);
        List<Outcome<Integer>> first = chunk(items, true);
        List<Outcome<Integer>> again = chunk(items, true);
        assertThat(first).allMatch(o -> o instanceof Outcome.Executed);
        assertThat(first).extracting(o -> o.key().id()).containsExactlyElementsOf(items);
        assertThat(again).allMatch(o -> o instanceof Outcome.Replayed);
        assertThat(again).extracting(Outcome::value).containsExactlyElementsOf(first.stream().map(Outcome::value).toList());
        assertThat(runs.values()).allMatch(n -> n.get() == 1).hasSize(20);
        assertThat(ledgerRows()).isEqualTo(20);
    }

    @Test
    void itemsRecordedInAnEarlierChunkAreReplayedAndAnExpiredOneRunsAgain() throws Exception {
        chunk(items(0, 5), true);
        clock.advance(Duration.ofDays(7).minusMillis(1));
        chunk(List.of("item-00000"), true); // not yet expired: replayed, keeps its expiry
        chunk(items(3, 4), true);
        clock.advance(Duration.ofMillis(1)); // items 0..4 expire now, exactly
        List<String> mixed = new ArrayList<>(items(4, 8));
        mixed.add(0, "item-00002");
        List<Outcome<Integer>> outcomes = chunk(mixed, true);
        assertThat(outcomes).extracting(Outcome::status).containsExactly(Outcome.Status.EXECUTED, Outcome.Status.EXECUTED,
                Outcome.Status.EXECUTED, Outcome.Status.EXECUTED, Outcome.Status.EXECUTED);
        assertThat(runs.get("item-00002")).hasValue(2);
        clock.advance(Duration.ofMillis(1));
        assertThat(chunk(List.of("item-00005", "item-00009"), true)).extracting(Outcome::status)
                .containsExactly(Outcome.Status.REPLAYED, Outcome.Status.EXECUTED);
    }

    @Test
    void aDuplicateKeyInsideOneChunkIsRefusedBeforeAnythingIsWritten() throws Exception {
        List<String> items = new ArrayList<>(items(0, 4));
        items.add("item-00002");
        assertThatThrownBy(() -> chunk(items, true)).isInstanceOf(DuplicateKeyInChunkException.class)
                .hasMessageContaining("items 2 and 4");
        assertThat(runs).isEmpty();
        assertThat(recordCount()).isZero();
    }

    @Test
    void aFinalFailureIsRecordedForItsItemAloneAndAnyOtherFailureLeavesTheChunkToRollBack() throws Exception {
        List<String> items = List.of("item-00001", "item-00002-rejected", "item-00003");
        List<Outcome<Integer>> outcomes = chunk(items, true);
        assertThat(outcomes).extracting(Outcome::status).containsExactly(Outcome.Status.EXECUTED, Outcome.Status.FAILED,
                Outcome.Status.EXECUTED);
        assertThat(chunk(items, true)).extracting(Outcome::status).containsExactly(Outcome.Status.REPLAYED, Outcome.Status.FAILED,
                Outcome.Status.REPLAYED);
        assertThat(ledgerRows()).isEqualTo(2);

        List<String> failing = List.of("item-00010", "item-0001x", "item-00012");
        IllegalStateException bug = new IllegalStateException("bug in item 11");
        assertThatThrownBy(() -> {
            try (Connection c = dataSource().getConnection()) {
                c.setAutoCommit(false);
                try {
                    idem.executeChunk(c, failing, AbstractChunkTest::booking, item -> {
                        if (item.equals("item-0001x")) {
                            throw bug;
                        }
                        return book(c, item);
                    });
                } finally {
                    c.commit(); // even a caller who commits leaves no key stuck in progress
                }
            }
        }).isSameAs(bug);
        assertThat(chunk(failing.stream().filter(i -> !i.equals("item-0001x")).toList(), true))
                .allMatch(o -> o instanceof Outcome.Executed);
    }

    @Test
    void aChunkTheLibraryRunsUndoesAFinalFailureForItsItemAloneByRunningTheChunkAgain() throws Exception {
        ManagedIdempotency<Connection> managed = ManagedIdempotency.of(idem, JdbcTransactions.of(dataSource()));
        List<String> items = List.of("item-00101", "item-00102-rejected", "item-00103");
        List<String> ran = new ArrayList<>();
        ChunkWork<Connection, String, Integer, SQLException> writesThenMayReject = (c, item) -> {
            ran.add(item);
            try (PreparedStatement s = c.prepareStatement("INSERT INTO chunk_ledger (item, amount) VALUES (?, ?)")) {
                s.setString(1, item);
                s.setInt(2, 1);
                s.executeUpdate();
            }
            if (item.endsWith("-rejected")) {
                throw new Rejected("instruction " + item + " is invalid");
            }
            return 1;
        };
        assertThat(managed.executeChunk(items, AbstractChunkTest::booking, writesThenMayReject)).extracting(Outcome::status)
                .containsExactly(Outcome.Status.EXECUTED, Outcome.Status.FAILED, Outcome.Status.EXECUTED);
        assertThat(ran).as("the first run, rolled back at the final failure, then the run with savepoints")
                .containsExactly("item-00101", "item-00102-rejected", "item-00101", "item-00102-rejected", "item-00103");
        assertThat(ledgerRows()).as("the rejected item's write undone, the others' kept once").isEqualTo(2);
        assertThat(managed.executeChunk(items, AbstractChunkTest::booking, writesThenMayReject)).extracting(Outcome::status)
                .containsExactly(Outcome.Status.REPLAYED, Outcome.Status.FAILED, Outcome.Status.REPLAYED);
        assertThat(ledgerRows()).isEqualTo(2);
    }

    @Test
    void aFirstChunkCostsTheStatementsTheDialectStatesAndAReplayOne() throws Exception {
        AtomicInteger statements = new AtomicInteger();
        try (Connection raw = dataSource().getConnection()) {
            raw.setAutoCommit(false);
            Connection c = CountingConnection.wrap(raw, statements);
            idem.executeChunk(c, items(0, 20), AbstractChunkTest::booking, item -> 1);
            raw.commit();
            assertThat(statements).as("statements of a first chunk of 20").hasValue(database.statements().firstChunkOf20());
            statements.set(0);
            idem.executeChunk(c, items(0, 20), AbstractChunkTest::booking, item -> 1);
            raw.commit();
            assertThat(statements).as("statements of a replayed chunk of 20").hasValue(database.statements().replayedChunkOf20());
        }
    }

    /**
     * A chunk of two statements' worth of keys ({@code 2 × 500}): every item runs once, in input
     * order, and the rerun replays every one.
     */
    @Test
    void aChunkOfTwoStatementsWorthOfKeysRunsEachItemOnceAndTheRerunReplaysThemAll() throws Exception {
        List<String> items = items(0, 1000);
        List<Outcome<Integer>> first = chunk(items, true);
        List<Outcome<Integer>> again = chunk(items, true);
        assertThat(first).hasSize(1000).allMatch(Outcome::isExecuted);
        assertThat(again).hasSize(1000).allMatch(o -> o.status() == Outcome.Status.REPLAYED);
        assertThat(again).extracting(Outcome::value).containsExactlyElementsOf(
                IntStream.range(0, 1000).boxed().collect(Collectors.toList()));
        assertThat(Tx.count(dataSource(), "SELECT COUNT(*) FROM chunk_ledger")).isEqualTo(1000);
    }

    /**
     * Results of 8 MiB each, 24 MiB in all: more than one completing statement may carry (4 MiB of
     * results, or one result if it is larger, well under MariaDB's default {@code max_allowed_packet}
     * of 16 MiB, which a statement of two of them would exceed), so they are recorded in several,
     * and every one replays whole.
     */
    @Test
    void aChunkWhoseResultsExceedOneStatementIsRecordedInSeveral() throws Exception {
        int eightMiB = 8 * 1024 * 1024;
        Idempotency<Connection> generous = Idempotency.builder(store).clock(clock)
                .keyPolicy(KeyPolicy.builder().retention(Duration.ofDays(7)).maxResultBytes(eightMiB).build()).build();
        List<String> items = items(0, 3);
        for (int round = 0; round < 2; round++) {
            List<Outcome<String>> outcomes;
            try (Connection c = dataSource().getConnection()) {
                c.setAutoCommit(false);
                outcomes = generous.executeChunk(c, items, item -> IdempotentCall.of(key(item), ResultCodec.string()),
                        item -> item.substring(item.length() - 1).repeat(eightMiB));
                c.commit();
            }
            Outcome.Status expected = round == 0 ? Outcome.Status.EXECUTED : Outcome.Status.REPLAYED;
            assertThat(outcomes).allMatch(o -> o.status() == expected);
            for (int i = 0; i < items.size(); i++) {
                assertThat(outcomes.get(i).value()).hasSize(eightMiB).startsWith(String.valueOf(i)).endsWith(String.valueOf(i));
            }
        }
    }

    /**
     * An open transaction holds one key of a chunk past the chunk's lock timeout: that item answers
     * {@code InProgress} without running, the chunk's other items run, and the transaction stays
     * usable. Where waits end to the millisecond, the chunk waits about the timeout per statement
     * that met the holder, not a second.
     */
    @Test
    void anItemHeldPastTheLockTimeoutAnswersInProgressAndTheOthersRun() throws Exception {
        Assumptions.assumeTrue(database.rowLocks(), "one open writer locks the whole database");
        Idempotency<Connection> impatient = Idempotency.builder(store).clock(clock).keyPolicy(KeyPolicy.builder()
                .retention(Duration.ofDays(7)).lockTimeout(Duration.ofMillis(200)).build()).build();
        List<Outcome<Integer>> outcomes;
        long waitedMillis;
        try (Connection holder = dataSource().getConnection(); Connection c = dataSource().getConnection()) {
            holder.setAutoCommit(false);
            c.setAutoCommit(false);
            try {
                idem.executeChunk(holder, items(1, 2), AbstractChunkTest::booking, item -> book(holder, item));
                long started = System.nanoTime();
                outcomes = impatient.executeChunk(c, items(0, 3), AbstractChunkTest::booking, item -> book(c, item));
                waitedMillis = (System.nanoTime() - started) / 1_000_000;
                c.commit();
            } finally {
                c.rollback();
                holder.rollback();
            }
        }
        assertThat(outcomes).extracting(Outcome::status)
                .containsExactly(Outcome.Status.EXECUTED, Outcome.Status.IN_PROGRESS, Outcome.Status.EXECUTED);
        assertThat(runs.get("item-00001")).as("the held item ran once, in the holder only").hasValue(1);
        assertThat(Tx.count(dataSource(), "SELECT COUNT(*) FROM chunk_ledger")).as("the other items' rows committed").isEqualTo(2);
        if (database.lockWaitsEndToTheMillisecond()) {
            assertThat(waitedMillis).as("waited about 200 ms per statement that met the holder, not a second").isLessThan(1150L);
        }
    }

    /**
     * A chunk at READ UNCOMMITTED meets another transaction's chunk whose items ran and completed but
     * which has not committed, and then rolls back: it must not replay those items' results (a plain
     * read there sees the uncommitted records); it waits for them, and runs them once the holder rolls
     * back.
     */
    @Test
    void aChunkAtReadUncommittedNeverReplaysResultsThatWereNotCommitted() throws Exception {
        Assumptions.assumeTrue(database.rowLocks(), "one open writer locks the whole database");
        Assumptions.assumeTrue(database.isolationLevels().contains(Connection.TRANSACTION_READ_UNCOMMITTED),
                "this database offers no READ UNCOMMITTED");
        List<Outcome<Integer>> outcomes;
        boolean answeredBeforeTheRollback;
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try (Connection holder = dataSource().getConnection(); Connection c = dataSource().getConnection()) {
            holder.setAutoCommit(false);
            c.setAutoCommit(false);
            c.setTransactionIsolation(Connection.TRANSACTION_READ_UNCOMMITTED);
            try {
                assertThat(idem.executeChunk(holder, items(1, 3), AbstractChunkTest::booking, item -> book(holder, item)))
                        .extracting(Outcome::status).containsOnly(Outcome.Status.EXECUTED);
                Future<List<Outcome<Integer>>> chunk = thread.submit(() ->
                        idem.executeChunk(c, items(0, 4), AbstractChunkTest::booking, item -> book(c, item)));
                Thread.sleep(300);
                answeredBeforeTheRollback = chunk.isDone();
                holder.rollback();
                outcomes = chunk.get(30, TimeUnit.SECONDS);
                c.commit();
            } finally {
                c.rollback();
                holder.rollback();
            }
        } finally {
            thread.shutdownNow();
        }
        assertThat(outcomes).as("the READ UNCOMMITTED chunk's answers (given %s the holder rolled back)",
                answeredBeforeTheRollback ? "before" : "after").extracting(Outcome::status).containsOnly(Outcome.Status.EXECUTED);
        assertThat(Tx.count(dataSource(), "SELECT COUNT(*) FROM chunk_ledger")).as("committed ledger rows").isEqualTo(4);
    }

    /**
     * A claimed record deleted before the chunk records its outcomes (here by the chunk's own work,
     * as a concurrent purge could): the chunk fails, naming the first key, and the caller's rollback
     * leaves nothing; the rerun runs every item.
     */
    @Test
    void aClaimedRecordThatVanishesBeforeTheCompletionFailsTheChunk() throws Exception {
        assertThatThrownBy(() -> {
            try (Connection c = dataSource().getConnection()) {
                c.setAutoCommit(false);
                try {
                    idem.executeChunk(c, items(0, 3), AbstractChunkTest::booking,
                            item -> {
                        if (item.equals("item-00002")) {
                            try (PreparedStatement s = c.prepareStatement("DELETE FROM " + TABLE + " WHERE key_id = 'item-00001'")) {
                                s.executeUpdate();
                            }
                        }
                        return book(c, item);
                    });
                } finally {
                    c.rollback();
                }
            }
        }).isInstanceOf(dev.idempotency.IdempotencyStoreException.class).hasMessageContaining(": 1 claimed records of the chunk were not found");
        assertThat(Tx.count(dataSource(), "SELECT COUNT(*) FROM " + TABLE)).isZero();
        assertThat(chunk(items(0, 3), true)).allMatch(Outcome::isExecuted);
    }

    /**
     * @return the isolation levels at which overlapping workers are run: the data source's default
     *     ({@code -1}), and every level the database offers
     */
    protected List<Integer> workerIsolationLevels() {
        List<Integer> levels = new ArrayList<>(List.of(-1));
        levels.addAll(database.isolationLevels());
        return levels;
    }

    /** @return {@link #dataSource()}, with every connection it hands out set to {@code isolation} */
    private DataSource atIsolation(int isolation) {
        DataSource pool = dataSource();
        if (isolation < 0) {
            return pool;
        }
        return (DataSource) java.lang.reflect.Proxy.newProxyInstance(DataSource.class.getClassLoader(),
                new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    Object result;
                    try {
                        result = method.invoke(pool, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                    if (result instanceof Connection) {
                        ((Connection) result).setTransactionIsolation(isolation);
                    }
                    return result;
                });
    }

    @ParameterizedTest(name = "isolation {0} (-1: the data source's default)")
    @MethodSource("workerIsolationLevels")
    void workersWithOverlappingChunksRunEachItemOnceAndNoConflictReachesThem(int isolation) throws Exception {
        ManagedIdempotency<Connection> managed = ManagedIdempotency.builder(idem, JdbcTransactions.of(atIsolation(isolation)))
                .retryPolicy(RetryPolicy.builder().maxAttempts(20).backoff(Duration.ofMillis(1), Duration.ofMillis(50)).build()).build();
        List<String> all = items(0, 200);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<JobResult<Integer>>> workers = new ArrayList<>();
            for (int w = 0; w < 4; w++) {
                List<String> mine = new ArrayList<>(all.subList(w * 25, Math.min(all.size(), w * 25 + 125)));
                if (w % 2 == 1) {
                    Collections.reverse(mine);
                }
                BatchJob<Connection, String, Integer, SQLException> job = BatchJob.builder(managed,
                        AbstractChunkTest::booking, this::book).chunkSize(20).build();
                workers.add(pool.submit(() -> job.process(mine.iterator(), mine.size())));
            }
            for (Future<JobResult<Integer>> worker : workers) {
                JobProgress p = worker.get().progress();
                assertThat(p.held()).isZero();
                assertThat(p.mismatched()).isZero();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(ledgerRows()).as("one ledger row per item").isEqualTo(200);
        assertThat(recordCount()).isEqualTo(200);
    }

    @Test
    void aJobReportsProgressAndARerunOfAFinishedJobExecutesNothing() throws Exception {
        ManagedIdempotency<Connection> managed = ManagedIdempotency.of(idem, JdbcTransactions.of(dataSource()));
        List<JobProgress> seen = new ArrayList<>();
        BatchJob<Connection, String, Integer, SQLException> job = BatchJob.builder(managed,
                AbstractChunkTest::booking,
                this::book).chunkSize(100).listener(seen::add).build();
        JobProgress first = job.process(items(0, 1000).stream(), 1000).progress();
        assertThat(seen).hasSize(10);
        assertThat(seen.get(4).done()).isEqualTo(500);
        assertThat(first.executed()).isEqualTo(1000);
        assertThat(first.nothingExecuted()).isFalse();
        JobProgress rerun = job.process(items(0, 1000).iterator(), 1000).progress();
        assertThat(rerun.executed()).isZero();
        assertThat(rerun.replayed()).isEqualTo(1000);
        assertThat(rerun.nothingExecuted()).isTrue();
        assertThat(ledgerRows()).isEqualTo(1000);
    }

    int ledgerRows() throws SQLException {
        return count("SELECT COUNT(*) FROM chunk_ledger");
    }

    int recordCount() throws SQLException {
        return count("SELECT COUNT(*) FROM " + TABLE);
    }

    private int count(String sql) throws SQLException {
        try (Connection c = dataSource().getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getInt(1);
        }
    }
}
