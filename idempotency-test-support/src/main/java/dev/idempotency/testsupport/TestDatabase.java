package dev.idempotency.testsupport;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.List;
import java.util.Objects;

/**
 * One database the JDBC suites run on, with every fact about it that a suite asks, stated once: how
 * to open a pool on it (a server of the environment that is absent skips the test, or fails it
 * under CI, when its pool is first opened; see {@link DatabaseServer}), the dialect the store
 * is built with, the isolation levels it offers, how its lock waits end, and what a claim costs in
 * statements. A new database costs one constant here and one test class in {@code idempotency-jdbc}
 * whose nested classes run the shared suites on it.
 *
 * <p>Immutable and thread-safe; each {@link #pool} call opens a new pool, which its caller closes.
 *
 * @param name for messages and test names: HSQLDB, PostgreSQL, ...
 * @param opener opens a pool on it
 * @param dialectClass the class name of the {@code SqlDialect} the store is built with, or
 *     {@code null} for the one detected from the connection (a name, since this module depends on
 *     no module of the project)
 * @param isolationLevels the isolation levels it offers and the suites run at, as {@link Connection}
 *     constants; empty if it has only one (SQLite)
 * @param rowLocks whether an open transaction that holds one key leaves other keys free (row locks,
 *     not one write lock for the whole database)
 * @param transactionUsableAfterLockTimeout whether the caller's transaction is still usable after a
 *     claim's lock wait ran out (else the caller must roll it back)
 * @param lockWaitsEndToTheMillisecond whether the dialect bounds a lock wait to the millisecond
 *     (else in whole seconds, as documented)
 * @param statements what a claim costs, as the dialect's Javadoc states, or {@code null} if no suite
 *     counts it on this database
 */
public record TestDatabase(String name, Opener opener, String dialectClass, List<Integer> isolationLevels,
                           boolean rowLocks, boolean transactionUsableAfterLockTimeout, boolean lockWaitsEndToTheMillisecond,
                           Statements statements) {

    /** Opens a pool on a database. */
    @FunctionalInterface
    public interface Opener {
        /**
         * @param name a database name unique to the caller (embedded engines), ignored by servers
         * @param size the pool size
         * @return a new pool
         * @throws IOException if a file it needs cannot be created
         */
        HikariDataSource open(String name, int size) throws IOException;
    }

    /**
     * Statements a claim costs on a database, as its dialect's Javadoc states; the suites count them.
     *
     * @param firstExecution statements of a first execution
     * @param replay statements of a replay
     * @param firstChunkOf20 statements of a first chunk of 20 new items
     * @param replayedChunkOf20 statements of a replayed chunk of 20
     */
    public record Statements(int firstExecution, int replay, int firstChunkOf20, int replayedChunkOf20) {

        /**
         * @param firstExecution statements of a first execution
         * @param replay statements of a replay
         * @return the costs of a dialect that claims a chunk key by key: per key, the first
         *     execution's statements but the completing one, then one batch of completions; a replay,
         *     one replay per key
         */
        public static Statements keyByKey(int firstExecution, int replay) {
            return new Statements(firstExecution, replay, 20 * (firstExecution - 1) + 1, 20 * replay);
        }
    }

    private static final List<Integer> EVERY_LEVEL = List.of(Connection.TRANSACTION_READ_UNCOMMITTED,
            Connection.TRANSACTION_READ_COMMITTED, Connection.TRANSACTION_REPEATABLE_READ, Connection.TRANSACTION_SERIALIZABLE);

    /**
     * In-memory HSQLDB in MVCC mode, as {@code SA}: claims with SELECT, MERGE and the completing
     * UPDATE, a chunk key by key; a replay, one SELECT.
     */
    public static final TestDatabase HSQLDB = new TestDatabase("HSQLDB", (name, size) -> TestDatabases.hsqldb(name, size),
            null, EVERY_LEVEL, true, true, false, Statements.keyByKey(3, 1));

    /**
     * Embedded in-memory H2, waiting up to 10 s for a lock: the standard claim of {@code SqlDialect}
     * (SELECT, INSERT, the completing UPDATE), a chunk key by key; a replay, one SELECT. The claim's
     * lock wait is the session's lock timeout, set in milliseconds for the claim's statement.
     */
    public static final TestDatabase H2 = new TestDatabase("H2", TestDatabases::h2, null, EVERY_LEVEL, true, true, true,
            Statements.keyByKey(3, 1));

    /**
     * SQLite in a temporary file in write-ahead-log mode, with the driver's deferred transactions and
     * a busy timeout of 10 s (the file and its directory are deleted when the pool closes): one
     * writer at a time; the upsert claim and the completing UPDATE, a chunk key by key; a replay, the
     * upsert that changes no row and a SELECT.
     */
    public static final TestDatabase SQLITE = new TestDatabase("SQLite", TestDatabase::sqlite, null, List.of(), false, true,
            false, Statements.keyByKey(2, 2));

    /**
     * The PostgreSQL server of the environment: one claim-or-find statement and the completing
     * UPDATE; a chunk, one INSERT ... RETURNING of every key and one UPDATE; a replay, the
     * claim-or-find statement; a replayed chunk, the INSERT that claims nothing and a SELECT. A lock
     * wait that runs out (57014) aborts the transaction.
     */
    public static final TestDatabase POSTGRES = new TestDatabase("PostgreSQL", (name, size) -> TestDatabases.postgres(size),
            null, EVERY_LEVEL, true, false, true, new Statements(2, 1, 2, 2));

    /**
     * The PostgreSQL server of the environment with the record table partitioned by expiry day
     * ({@code PartitionedPostgresDialect}), which claims at READ COMMITTED only. Its costs are not
     * counted by a suite yet.
     */
    public static final TestDatabase PARTITIONED_POSTGRES = new TestDatabase("partitioned PostgreSQL",
            (name, size) -> TestDatabases.postgres(size), "dev.idempotency.jdbc.dialect.PartitionedPostgresDialect",
            List.of(Connection.TRANSACTION_READ_COMMITTED), true, false, true, null);

    /**
     * The MariaDB server of the environment: SELECT, INSERT ... ON DUPLICATE KEY UPDATE and the
     * completing UPDATE; a chunk in one SELECT, one multi-row INSERT and one batch of UPDATEs; a
     * replay, one SELECT. {@code max_statement_time} (1969) rolls back the waiting statement only.
     */
    public static final TestDatabase MARIADB = new TestDatabase("MariaDB", (name, size) -> TestDatabases.mariadb(size), null,
            EVERY_LEVEL, true, true, false, new Statements(3, 1, 3, 1));

    /** @throws NullPointerException if {@code name}, {@code opener} or {@code isolationLevels} is null */
    public TestDatabase {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(opener, "opener");
        isolationLevels = List.copyOf(isolationLevels);
    }

    /**
     * @param name a database name unique to the caller, for embedded engines
     * @return a new pool of {@link TestDatabases#POOL_SIZE} connections
     */
    public HikariDataSource pool(String name) {
        return pool(name, TestDatabases.POOL_SIZE);
    }

    /**
     * @param name a database name unique to the caller, for embedded engines
     * @param size the pool size
     * @return a new pool; a server's is skipped or failed as {@link DatabaseServer} says when absent
     */
    public HikariDataSource pool(String name, int size) {
        try {
            return opener.open(name, size);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + this.name + " database '" + name + "'", e);
        }
    }

    /**
     * @param name a database name unique to the caller, for embedded engines
     * @return a pool of {@link TestDatabases#POOL_SIZE} opened when a test first needs it
     */
    public LazyPool lazyPool(String name) {
        return lazyPool(name, TestDatabases.POOL_SIZE);
    }

    /**
     * @param name a database name unique to the caller, for embedded engines
     * @param size the pool size
     * @return a pool opened when a test first needs it
     */
    public LazyPool lazyPool(String name, int size) {
        return new LazyPool(() -> pool(name, size));
    }

    /**
     * @return the statement costs
     * @throws IllegalStateException if none are stated for this database
     */
    @Override
    public Statements statements() {
        if (statements == null) {
            throw new IllegalStateException("no statement costs are stated for " + name + ": state them in TestDatabase");
        }
        return statements;
    }

    /** @return the name */
    @Override
    public String toString() {
        return name;
    }

    private static HikariDataSource sqlite(String name, int size) throws IOException {
        Path dir = Files.createTempDirectory("idempotency-sqlite");
        HikariConfig config = TestDatabases.config(TestDatabases.sqliteUrl(dir.resolve(name + ".db"), ""), null, null, size);
        return new HikariDataSource(config) {
            @Override
            public void close() {
                super.close();
                try {
                    deleteDirectory(dir);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        };
    }

    /**
     * Deletes a directory of files, as a SQLite database leaves it.
     *
     * @param dir the directory, or {@code null} (nothing to do)
     * @throws IOException if a file cannot be deleted
     */
    public static void deleteDirectory(Path dir) throws IOException {
        if (dir != null && Files.isDirectory(dir)) {
            try (var files = Files.list(dir)) {
                for (Path p : files.toList()) {
                    Files.deleteIfExists(p);
                }
            }
            Files.deleteIfExists(dir);
        }
    }
}
