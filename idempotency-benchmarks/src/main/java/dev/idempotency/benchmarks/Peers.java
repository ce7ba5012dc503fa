package dev.idempotency.benchmarks;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.apache.camel.processor.idempotent.jdbc.JdbcMessageIdRepository;
import org.springframework.integration.jdbc.metadata.JdbcMetadataStore;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The deduplication stores a user would pick instead of this library, set up as their
 * documentation shows, on the benchmark's pool: Spring Integration's {@code JdbcMetadataStore}
 * ({@code putIfAbsent}, in a Spring transaction of its own) and Camel's
 * {@code JdbcMessageIdRepository} ({@code add}, which runs its own transaction). Each marks a key in
 * a transaction of its own, committed before the business transaction runs: the mark is not atomic
 * with the business change, and stores no result. Thread-safe.
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
    private final TransactionTemplate springTx;
    private JdbcMetadataStore spring;
    private JdbcMessageIdRepository camel;

    Peers(Database database, DataSource dataSource) {
        this.database = database;
        this.dataSource = dataSource;
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
        if (!supports(peer)) {
            throw new UnsupportedOperationException(peer + " does not run on " + database.title());
        }
        return switch (peer) {
            case SPRING -> springTx.execute(status -> spring.putIfAbsent(key, "1")) == null;
            case CAMEL -> camel.add(key);
        };
    }
}
