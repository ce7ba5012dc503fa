package dev.idempotency.benchmarks;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.LeasedIdempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.ResultCodec;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.jdbc.JdbcTransactions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import javax.sql.DataSource;

/**
 * One database prepared for a benchmark: a pool, fresh tables, and an engine on them; and the
 * transactions that the benchmarks time and the counting pass counts. Thread-safe.
 *
 * <p>Each transaction borrows a connection from the pool (auto-commit off), runs, commits and
 * gives the connection back, as a request handler would.
 */
final class Fixture implements AutoCloseable {

    /** The idempotency table; its own name, so that a run never touches an application's table. */
    static final String TABLE = "bench_idempotency_record";
    /** The business table. */
    static final String ORDERS = "bench_order";
    /** The scope of every key. */
    static final String SCOPE = "bench";

    /** The stock of the reservation baseline: {@value #SKUS} items, each with more stock than a run takes. */
    static final String STOCK = "bench_stock";
    /** The reservations of the reservation baseline. */
    static final String RESERVATIONS = "bench_reservation";
    /** Items in stock. */
    static final int SKUS = 1000;

    private static final String INSERT_ORDER = "INSERT INTO " + ORDERS + " (id, amount, note) VALUES (?, ?, ?)";
    private static final String TAKE_STOCK = "UPDATE " + STOCK + " SET available = available - ? WHERE sku = ? AND available >= ?";
    private static final String INSERT_RESERVATION = "INSERT INTO " + RESERVATIONS + " (id, sku, quantity) VALUES (?, ?, ?)";

    final Database database;
    final HikariDataSource pool;
    /** A second pool on the same database with auto-commit on, for Spring Integration's cheapest use. */
    private final HikariDataSource autoCommitPool;
    final OffsetClock clock = new OffsetClock();
    final Idempotency<Connection> engine;
    /** The same engine in the mode where it runs the transactions itself. */
    final ManagedIdempotency<Connection> managed;
    /** Lease mode over the same store, sharing {@link #managed}'s settings. */
    final LeasedIdempotency<Connection> leased;
    private final DataSource dataSource;
    private final Peers peers;
    private final Path dir;
    private final String prefix = UUID.randomUUID().toString().substring(0, 8);
    private final AtomicLong ids = new AtomicLong();
    private final AtomicLong hotAttempts = new AtomicLong();

    private Fixture(Database database, Path dir, HikariDataSource pool, UnaryOperator<DataSource> wrap) {
        this.database = database;
        this.dir = dir;
        this.pool = pool;
        this.autoCommitPool = autoCommit(pool);
        this.dataSource = wrap.apply(pool);
        JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().table(TABLE).build();
        this.engine = Idempotency.builder(store).clock(clock).build();
        this.managed = ManagedIdempotency.of(engine, JdbcTransactions.of(dataSource));
        this.leased = LeasedIdempotency.of(managed, store);
        this.peers = new Peers(database, dataSource, wrap.apply(autoCommitPool));
    }

    /** @return a pool of two connections to the database of {@code pool} (the same URL), auto-commit on */
    private static HikariDataSource autoCommit(HikariDataSource pool) {
        HikariConfig config = new HikariConfig();
        pool.copyStateTo(config);
        config.setPoolName(pool.getPoolName() + "-autocommit");
        config.setAutoCommit(true);
        config.setMaximumPoolSize(2);
        config.setMinimumIdle(0);
        return new HikariDataSource(config);
    }

    /**
     * Opens a pool on the database and creates fresh tables (dropping the benchmark's own tables
     * of an earlier run).
     *
     * @param database the database
     * @return the fixture
     */
    static Fixture open(Database database) {
        return open(database, UnaryOperator.identity());
    }

    /**
     * @param database the database
     * @param wrap wraps the pool, e.g. to count statements
     * @return the fixture
     */
    static Fixture open(Database database, UnaryOperator<DataSource> wrap) {
        Path dir;
        try {
            dir = Files.createTempDirectory("idempotency-bench-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        HikariDataSource pool = database.pool(dir);
        Fixture f = new Fixture(database, dir, pool, wrap);
        try {
            f.createTables();
        } catch (SQLException | RuntimeException e) {
            f.close();
            throw new IllegalStateException("could not create the benchmark tables on " + database.title(), e);
        }
        return f;
    }

    /**
     * Drops and creates both tables again: every batch iteration starts from empty ones.
     *
     * @throws SQLException if it fails
     */
    void resetTables() throws SQLException {
        createTables();
    }

    private void createTables() throws SQLException {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + ORDERS);
            s.execute("DROP TABLE IF EXISTS " + TABLE);
            s.execute("DROP TABLE IF EXISTS " + STOCK);
            s.execute("DROP TABLE IF EXISTS " + RESERVATIONS);
            s.execute("CREATE TABLE " + ORDERS + " (id BIGINT NOT NULL PRIMARY KEY, amount BIGINT NOT NULL,"
                    + " note VARCHAR(64) NOT NULL)");
            s.execute("CREATE TABLE " + STOCK + " (sku BIGINT NOT NULL PRIMARY KEY, available BIGINT NOT NULL)");
            s.execute("CREATE TABLE " + RESERVATIONS + " (id BIGINT NOT NULL PRIMARY KEY, sku BIGINT NOT NULL,"
                    + " quantity INT NOT NULL)");
            c.commit();
            try (PreparedStatement stock = c.prepareStatement("INSERT INTO " + STOCK + " (sku, available) VALUES (?, ?)")) {
                for (int sku = 0; sku < SKUS; sku++) {
                    stock.setLong(1, sku);
                    stock.setLong(2, Long.MAX_VALUE / 2);
                    stock.addBatch();
                }
                stock.executeBatch();
            }
            c.commit();
            peers.createTables(c);
        }
        peers.start();
        ((JdbcIdempotencyStore) engine.store()).createTableIfMissing(pool);
    }

    /** @return a fresh key, never used before */
    IdempotencyKey freshKey() {
        return IdempotencyKey.of(SCOPE, prefix + "-" + ids.incrementAndGet());
    }

    /**
     * @return the key of the next attempt on the hot key: every {@link Database#THREADS}
     *     consecutive attempts share one key, so that a burst of concurrent duplicates meets on it
     */
    IdempotencyKey hotKey() {
        return IdempotencyKey.of(SCOPE, prefix + "-hot-" + hotAttempts.getAndIncrement() / Database.THREADS);
    }

    /** @param i an index @return the i-th key recorded by {@link #recordKeys(int)} */
    static IdempotencyKey recordedKey(int i) {
        return IdempotencyKey.of(SCOPE, "recorded-" + i);
    }

    private long insertOrder(Connection c) throws SQLException {
        long id = ids.incrementAndGet();
        try (PreparedStatement s = c.prepareStatement(INSERT_ORDER)) {
            s.setLong(1, id);
            s.setLong(2, 1 + (id & 1023));
            s.setString(3, "order");
            s.executeUpdate();
        }
        return id;
    }

    /**
     * The realistic business change: reserve one unit of an item, a conditional {@code UPDATE} of
     * its stock and an {@code INSERT} of the reservation.
     */
    private long reserve(Connection c) throws SQLException {
        long id = ids.incrementAndGet();
        long sku = id % SKUS;
        try (PreparedStatement take = c.prepareStatement(TAKE_STOCK)) {
            take.setLong(1, 1);
            take.setLong(2, sku);
            take.setLong(3, 1);
            if (take.executeUpdate() != 1) {
                throw new IllegalStateException("item " + sku + " is out of stock");
            }
        }
        try (PreparedStatement s = c.prepareStatement(INSERT_RESERVATION)) {
            s.setLong(1, id);
            s.setLong(2, sku);
            s.setInt(3, 1);
            s.executeUpdate();
        }
        return id;
    }

    /**
     * The realistic baseline: an inventory reservation (conditional stock update and reservation
     * insert), committed.
     *
     * @return the reservation's id
     * @throws SQLException if it fails
     */
    long reservationBaseline() throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            long id = reserve(c);
            c.commit();
            return id;
        }
    }

    /**
     * The reservation wrapped in the library with a fresh key, in the caller's transaction.
     *
     * @return the outcome, {@code Executed}
     * @throws SQLException if it fails
     */
    Outcome<Long> reservationFirstExecution() throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            Outcome<Long> outcome = engine.execute(freshKey(), c, () -> reserve(c));
            c.commit();
            return executed(outcome);
        }
    }

    /**
     * A first execution in the mode where the library runs the transaction itself
     * ({@link ManagedIdempotency} over {@link JdbcTransactions}).
     *
     * @return the outcome, {@code Executed}
     * @throws SQLException if it fails
     */
    Outcome<Long> managedFirstExecution() throws SQLException {
        return executed(managed.execute(freshKey(), this::insertOrder));
    }

    /**
     * A replay in the mode where the library runs the transaction itself.
     *
     * @param key a key recorded by {@link #recordKeys(int)}
     * @return the outcome, {@code Replayed}
     * @throws SQLException if it fails
     */
    Outcome<Long> managedReplay(IdempotencyKey key) throws SQLException {
        return replayed(key, managed.execute(key, this::insertOrder));
    }

    private static Outcome<Long> replayed(IdempotencyKey key, Outcome<Long> outcome) {
        if (!(outcome instanceof Outcome.Replayed)) {
            throw new IllegalStateException("recorded key " + key + " gave " + outcome + " instead of Replayed");
        }
        return outcome;
    }

    /**
     * A first execution in write-last mode ({@link ManagedIdempotency#writeLast}): the work
     * runs first, then the completed record is written and committed.
     *
     * @return the outcome, {@code Executed}
     * @throws SQLException if it fails
     */
    Outcome<Long> writeLastFirst() throws SQLException {
        return executed(managed.writeLast(freshKey(), this::insertOrder));
    }

    /**
     * A replay in write-last mode: the work runs, the write finds the record, the transaction is
     * rolled back and the record replayed.
     *
     * @param key a key recorded by {@link #recordKeys(int)}
     * @return the outcome, {@code Replayed}
     * @throws SQLException if it fails
     */
    Outcome<Long> writeLastReplay(IdempotencyKey key) throws SQLException {
        return replayed(key, managed.writeLast(key, this::insertOrder));
    }

    private static Outcome<Long> executed(Outcome<Long> outcome) {
        if (!(outcome instanceof Outcome.Executed)) {
            throw new IllegalStateException("a fresh key gave " + outcome + " instead of Executed");
        }
        return outcome;
    }

    /**
     * A peer's first execution: the peer marks a fresh key in a transaction of its own, then the
     * business transaction runs (the baseline's).
     *
     * @param peer which peer
     * @return the order's id
     * @throws SQLException if it fails
     */
    long peerFirst(Peers.Peer peer) throws SQLException {
        if (!peers.mark(peer, freshKey().id())) {
            throw new IllegalStateException(peer + " found a fresh key already marked");
        }
        return baseline();
    }

    /**
     * A peer's first execution in the business transaction: one Spring transaction in which the
     * peer marks a fresh key and the baseline's insert runs, then commits.
     *
     * @param peer which peer
     */
    void peerFirstInTransaction(Peers.Peer peer) {
        if (!peers.inTransaction(peer, freshKey().id(), this::insertOrder)) {
            throw new IllegalStateException(peer + " found a fresh key already marked");
        }
    }

    /**
     * A peer's duplicate in the business transaction: the peer finds the key marked in a Spring
     * transaction, and the business change does not run.
     *
     * @param peer which peer
     * @param key a key marked by {@link #recordKeys(int)}
     */
    void peerDuplicateInTransaction(Peers.Peer peer, IdempotencyKey key) {
        if (peers.inTransaction(peer, key.id(), this::insertOrder)) {
            throw new IllegalStateException(peer + " did not find recorded key " + key);
        }
    }

    /**
     * Spring Integration's cheapest first execution: {@code putIfAbsent} as one auto-commit
     * statement (no transaction bound), then the business transaction (the baseline's).
     *
     * @return the order's id
     * @throws SQLException if it fails
     */
    long springAutoCommitFirst() throws SQLException {
        if (!peers.markAutoCommit(freshKey().id())) {
            throw new IllegalStateException("Spring Integration found a fresh key already marked");
        }
        return baseline();
    }

    /**
     * Spring Integration's cheapest duplicate: {@code putIfAbsent} in auto-commit finds the key.
     *
     * @param key a key marked by {@link #recordKeys(int)}
     */
    void springAutoCommitDuplicate(IdempotencyKey key) {
        if (peers.markAutoCommit(key.id())) {
            throw new IllegalStateException("Spring Integration did not find recorded key " + key);
        }
    }

    /**
     * A peer's duplicate: the peer finds the key marked, and the business transaction does not run.
     *
     * @param peer which peer
     * @param key a key marked by {@link #recordKeys(int)}
     */
    void peerDuplicate(Peers.Peer peer, IdempotencyKey key) {
        if (peers.mark(peer, key.id())) {
            throw new IllegalStateException(peer + " did not find recorded key " + key);
        }
    }

    /**
     * The baseline: one business insert, committed.
     *
     * @return the new order's id
     * @throws SQLException if it fails
     */
    long baseline() throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            long id = insertOrder(c);
            c.commit();
            return id;
        }
    }

    /**
     * The same transaction wrapped in the library.
     *
     * @param key the key
     * @return the outcome
     * @throws SQLException if it fails
     */
    Outcome<Long> execute(IdempotencyKey key) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            Outcome<Long> outcome = engine.execute(key, c, () -> insertOrder(c));
            if (outcome instanceof Outcome.InProgress) {
                c.rollback();
            } else {
                c.commit();
            }
            return outcome;
        }
    }

    /**
     * As {@link #execute}, for a first execution: fails unless the work ran.
     *
     * @return the outcome
     * @throws SQLException if it fails
     */
    Outcome<Long> firstExecution() throws SQLException {
        Outcome<Long> outcome = execute(freshKey());
        if (!(outcome instanceof Outcome.Executed)) {
            throw new IllegalStateException("a fresh key gave " + outcome + " instead of Executed");
        }
        return outcome;
    }

    /**
     * As {@link #execute}, for a replay: fails unless the recorded result came back.
     *
     * @param key a key recorded by {@link #recordKeys(int)}
     * @return the outcome
     * @throws SQLException if it fails
     */
    Outcome<Long> replay(IdempotencyKey key) throws SQLException {
        Outcome<Long> outcome = execute(key);
        if (!(outcome instanceof Outcome.Replayed)) {
            throw new IllegalStateException("recorded key " + key + " gave " + outcome + " instead of Replayed");
        }
        return outcome;
    }

    /**
     * One attempt of a client that retries the whole transaction when the database reports a
     * conflict or the store fails (as a concurrent duplicate can make it do on some databases).
     *
     * @param key the key
     * @param tally counts what happened
     * @return the final outcome
     * @throws SQLException if it fails
     */
    Outcome<Long> executeRetrying(IdempotencyKey key, Tally tally) throws SQLException {
        for (int attempt = 1; ; attempt++) {
            try {
                Outcome<Long> outcome = execute(key);
                tally.count(outcome);
                return outcome;
            } catch (IdempotencyStoreException e) { // TransactionConflictException included
                tally.retries++;
                if (attempt == 20) {
                    throw e;
                }
                try {
                    Thread.sleep(ThreadLocalRandom.current().nextInt(1, 5));
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    /**
     * Records keys {@code recorded-0 .. recorded-(n-1)} for the replay benchmark.
     *
     * @param n how many
     * @throws SQLException if it fails
     */
    void recordKeys(int n) throws SQLException {
        for (int i = 0; i < n; i++) {
            Outcome<Long> outcome = execute(recordedKey(i));
            if (!(outcome instanceof Outcome.Executed)) {
                throw new IllegalStateException("recording " + recordedKey(i) + " gave " + outcome);
            }
            for (Peers.Peer peer : Peers.Peer.values()) {
                if (peers.supports(peer)) {
                    peers.mark(peer, recordedKey(i).id());
                }
            }
        }
    }

    // ---- batch jobs: items 0 .. n-1 in chunks, one transaction per chunk --------------------------

    /** @param item an item of a batch @return its key */
    static IdempotencyKey itemKey(long item) {
        return IdempotencyKey.of(SCOPE, "item-" + item);
    }

    /** The business change of one batch item: its order row, added to the chunk's JDBC batch. */
    private static long addOrder(PreparedStatement batch, long item) throws SQLException {
        batch.setLong(1, item);
        batch.setLong(2, 1 + (item & 1023));
        batch.setString(3, "item");
        batch.addBatch();
        return item;
    }

    /** What one chunk runs in its transaction, given the connection and the batch of order rows. */
    @FunctionalInterface
    interface ChunkBody {
        void run(Connection c, PreparedStatement orders, long from, long to) throws SQLException;
    }

    /**
     * Runs items {@code 0 .. items-1} in chunks of {@code chunk}: per chunk, borrow a connection,
     * run {@code body}, send the order rows it added as one JDBC batch, commit.
     *
     * @return the items run
     */
    private long chunks(int items, int chunk, ChunkBody body) throws SQLException {
        for (long from = 0; from < items; from += chunk) {
            long to = Math.min(items, from + chunk);
            try (Connection c = dataSource.getConnection(); PreparedStatement orders = c.prepareStatement(INSERT_ORDER)) {
                body.run(c, orders, from, to);
                orders.executeBatch();
                c.commit();
            }
        }
        return items;
    }

    /**
     * The batch baseline: the business rows alone, one JDBC batch and one commit per chunk.
     *
     * @param items how many items
     * @param chunk items per transaction
     * @return the items run
     * @throws SQLException if it fails
     */
    long batchBaseline(int items, int chunk) throws SQLException {
        return chunks(items, chunk, (c, orders, from, to) -> {
            for (long i = from; i < to; i++) {
                addOrder(orders, i);
            }
        });
    }

    /**
     * The same chunks with one {@code Idempotency.execute} per item (fresh keys): claim, work
     * (adding the item's row to the chunk's batch), record; the rows are sent before the commit.
     *
     * @param items how many items
     * @param chunk items per transaction
     * @return the items run
     * @throws SQLException if it fails
     */
    long batchPerItem(int items, int chunk) throws SQLException {
        return chunks(items, chunk, (c, orders, from, to) -> {
            for (long i = from; i < to; i++) {
                long item = i;
                Outcome<Long> outcome = engine.execute(IdempotentCall.of(itemKey(item), ResultCodec.longs()), c,
                        () -> addOrder(orders, item));
                if (!(outcome instanceof Outcome.Executed)) {
                    throw new IllegalStateException("item " + item + " gave " + outcome + " instead of Executed");
                }
            }
        });
    }

    /**
     * The same chunks through {@code Idempotency.executeChunk} (fresh keys): one claim for the
     * chunk, each item's work adding its row to the batch, one batched recording.
     *
     * @param items how many items
     * @param chunk items per transaction
     * @return the items run
     * @throws SQLException if it fails
     */
    long batchChunk(int items, int chunk) throws SQLException {
        return chunks(items, chunk, (c, orders, from, to) -> {
            List<Long> list = LongStream.range(from, to).boxed().toList();
            List<Outcome<Long>> outcomes = engine.executeChunk(c, list, item -> IdempotentCall.of(Fixture.itemKey(item),
                    ResultCodec.longs()),
                    item -> addOrder(orders, item));
            for (Outcome<Long> outcome : outcomes) {
                if (!(outcome instanceof Outcome.Executed)) {
                    throw new IllegalStateException("a chunk item gave " + outcome + " instead of Executed");
                }
            }
        });
    }

    /**
     * Inserts {@code rows} completed records that expire at the clock's current time plus one
     * hour, in batches, then moves the clock past their expiry.
     *
     * @param rows how many
     * @throws SQLException if it fails
     */
    void insertExpired(int rows) throws SQLException {
        Instant now = clock.instant();
        long created = now.toEpochMilli();
        long expires = now.plus(Duration.ofHours(1)).toEpochMilli();
        byte[] result = "{\"order\":12345}".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        String batchPrefix = "expired-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        try (Connection c = pool.getConnection();
             PreparedStatement s = c.prepareStatement("INSERT INTO " + TABLE + " (scope, key_id, fingerprint, status,"
                     + " result_codec, result, created_at, completed_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
            for (int i = 1; i <= rows; i++) {
                s.setString(1, SCOPE);
                s.setString(2, batchPrefix + i);
                s.setString(3, "-");
                s.setString(4, "COMPLETED");
                s.setString(5, "string");
                s.setBytes(6, result);
                s.setLong(7, created);
                s.setLong(8, created);
                s.setLong(9, expires + (i % 1000));
                s.addBatch();
                if (i % 1000 == 0 || i == rows) {
                    s.executeBatch();
                }
                if (i % 20_000 == 0 || i == rows) {
                    c.commit();
                }
            }
        }
        clock.advance(Duration.ofHours(2));
    }

    /**
     * Purges every expired record in short transactions of at most {@code batch} rows each.
     *
     * @param batch the limit of one purge
     * @return the number of rows removed
     * @throws SQLException if it fails
     */
    long purgeAll(int batch) throws SQLException {
        long total = 0;
        int removed;
        do {
            try (Connection c = dataSource.getConnection()) {
                removed = engine.purgeExpired(c, batch);
                c.commit();
            }
            total += removed;
        } while (removed == batch);
        return total;
    }

    /**
     * Purges once, a single batch.
     *
     * @param batch the limit
     * @return the number of rows removed
     * @throws SQLException if it fails
     */
    int purgeOnce(int batch) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            int removed = engine.purgeExpired(c, batch);
            c.commit();
            return removed;
        }
    }

    @Override
    public void close() {
        autoCommitPool.close();
        pool.close();
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // A temporary directory: the system cleans it up eventually.
        }
    }

    /** What the attempts of one thread came to. Not thread-safe: one per thread. */
    static final class Tally {
        long executed;
        long replayed;
        long inProgress;
        long retries;

        void count(Outcome<?> outcome) {
            switch (outcome.status()) {
                case EXECUTED -> executed++;
                case REPLAYED -> replayed++;
                case IN_PROGRESS -> inProgress++;
                default -> throw new IllegalStateException("unexpected outcome " + outcome);
            }
        }
    }
}
