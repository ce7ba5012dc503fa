package dev.idempotency.benchmarks;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.apache.camel.processor.idempotent.jdbc.JdbcMessageIdRepository;
import org.springframework.integration.jdbc.metadata.JdbcMetadataStore;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The deduplication stores a user would pick instead of this library, set up as their
 * documentation shows, on the benchmark's pool: Spring Integration's {@code JdbcMetadataStore}
 * ({@code putIfAbsent}) and Camel's {@code JdbcMessageIdRepository} ({@code add}, which runs its own
 * transaction, or joins the Spring transaction bound to the pool). Each is used three ways: marking
 * a key in a transaction of its own, committed before the business transaction runs
 * ({@link #mark}); marking it in the business transaction itself, as the library does
 * ({@link #inTransaction}); and, for Spring Integration, its cheapest use, the one auto-commit
 * statement its idempotent receiver issues when no transaction is bound ({@link #markAutoCommit}).
 * Only the second is atomic with the business change; none stores a result. Thread-safe.
 */
final class Peers {

    /** Spring Integration's table, with a prefix of the benchmark's own. */
    static final String SPRING_TABLE = "BENCH_INT_METADATA_STORE";
    /** Camel's table, renamed to one of the benchmark's own. */
    static final String CAMEL_TABLE = "bench_camel_processed";

    /** The peers. */
    enum Peer {
        /** Spring Integration {@code JdbcMetadataStore.putIfAbsent}. */
        SPRING,
        /** Camel {@code JdbcMessageIdRepository.add}. */
        CAMEL
    }

    private final Database database;
    private final DataSource dataSource;
    private final DataSource autoCommit;
    private final TransactionTemplate springTx;
    private JdbcMetadataStore spring;
    private JdbcMetadataStore springAutoCommit;
    private JdbcMessageIdRepository camel;

    /**
     * @param database the database
     * @param dataSource the benchmark's pool, auto-commit off
     * @param autoCommit a pool on the same database with auto-commit on, for {@link #markAutoCommit}
     */
    Peers(Database database, DataSource dataSource, DataSource autoCommit) {
        this.database = database;
        this.dataSource = dataSource;
        this.autoCommit = autoCommit;
        this.springTx = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
    }

    /**
     * Drops and creates both peers' tables: Spring Integration's schema as shipped, Camel's as its
     * repository creates it (with its primary key).
     *
     * @param c a connection, committed afterwards
     * @throws SQLException if the DDL fails
     */
    void createTables(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + SPRING_TABLE);
            s.execute("DROP TABLE IF EXISTS " + CAMEL_TABLE);
            s.execute("CREATE TABLE " + SPRING_TABLE + " (METADATA_KEY VARCHAR(255) NOT NULL, METADATA_VALUE VARCHAR(4000),"
                    + " REGION VARCHAR(100) NOT NULL, CONSTRAINT " + SPRING_TABLE + "_PK PRIMARY KEY (METADATA_KEY, REGION))");
            s.execute("CREATE TABLE " + CAMEL_TABLE + " (processorName VARCHAR(255), messageId VARCHAR(100),"
                    + " createdAt TIMESTAMP, PRIMARY KEY (processorName, messageId))");
        }
        c.commit();
    }

    /** Starts the peers on their tables ({@link #createTables}); each takes connections from the pool. */
    void start() {
        JdbcMetadataStore store = new JdbcMetadataStore(dataSource);
        store.setTablePrefix("BENCH_INT_");
        store.setCheckDatabaseOnStart(false);
        store.afterPropertiesSet();
        spring = store;
        JdbcMetadataStore autoCommitStore = new JdbcMetadataStore(autoCommit);
        autoCommitStore.setTablePrefix("BENCH_INT_");
        autoCommitStore.setCheckDatabaseOnStart(false);
        autoCommitStore.afterPropertiesSet();
        springAutoCommit = autoCommitStore;
        JdbcMessageIdRepository repository = new JdbcMessageIdRepository(dataSource, "bench");
        repository.setTableName(CAMEL_TABLE);
        repository.setCreateTableIfNotExists(false);
        repository.start();
        camel = repository;
    }

    /**
     * @param peer a peer
     * @return whether it runs on the database: Spring Integration's {@code putIfAbsent} does not on
     *     SQLite ({@code INSERT ... SELECT ... HAVING COUNT(*) = 0}: "HAVING clause on a non-aggregate query")
     */
    boolean supports(Peer peer) {
        return !(peer == Peer.SPRING && database == Database.SQLITE);
    }

    /**
     * Marks a key with one peer, in a transaction of the peer's own.
     *
     * @param peer the peer
     * @param key the key
     * @return {@code true} if the key was new (the work should run), {@code false} for a duplicate
     * @throws UnsupportedOperationException if the peer does not run on the database ({@link #supports})
     */
    boolean mark(Peer peer, String key) {
        supported(peer);
        return switch (peer) {
            case SPRING -> Boolean.TRUE.equals(springTx.execute(status -> markInTransaction(peer, key)));
            case CAMEL -> camel.add(key);
        };
    }

    /**
     * Marks a key with Spring Integration's store on the auto-commit pool, no transaction bound:
     * {@code putIfAbsent} runs its {@code INSERT ... SELECT} as one statement that commits itself
     * (and, for a duplicate, the {@code SELECT} of the value, committing itself too).
     *
     * @param key the key
     * @return {@code true} if the key was new, {@code false} for a duplicate
     * @throws UnsupportedOperationException if Spring Integration does not run on the database
     */
    boolean markAutoCommit(String key) {
        supported(Peer.SPRING);
        return springAutoCommit.putIfAbsent(key, "1") == null;
    }

    /**
     * Runs {@code work} in one Spring transaction on the benchmark's pool after the peer marked the
     * key in it: the mark commits or rolls back with the work.
     *
     * @param peer the peer
     * @param key the key
     * @param work the business change, given the transaction's connection
     * @return {@code true} if the key was new and the work ran, {@code false} for a duplicate
     * @throws UnsupportedOperationException if the peer does not run on the database ({@link #supports})
     */
    boolean inTransaction(Peer peer, String key, Work work) {
        return Boolean.TRUE.equals(springTx.execute(status -> {
            if (!markInTransaction(peer, key)) {
                return false;
            }
            try {
                work.run(DataSourceUtils.getConnection(dataSource));
            } catch (SQLException e) {
                throw new IllegalStateException("the business change failed", e);
            }
            return true;
        }));
    }

    /** The business change of {@link #inTransaction}. */
    @FunctionalInterface
    interface Work {
        void run(Connection c) throws SQLException;
    }

    /** Marks the key in the Spring transaction bound to the pool (Camel's {@code add} joins it). */
    private boolean markInTransaction(Peer peer, String key) {
        supported(peer);
        return switch (peer) {
            case SPRING -> spring.putIfAbsent(key, "1") == null;
            case CAMEL -> camel.add(key);
        };
    }

    private void supported(Peer peer) {
        if (!supports(peer)) {
            throw new UnsupportedOperationException(peer + " does not run on " + database.title());
        }
    }
}
