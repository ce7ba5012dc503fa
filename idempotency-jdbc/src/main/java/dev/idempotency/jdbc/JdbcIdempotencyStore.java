package dev.idempotency.jdbc;

import dev.idempotency.IdempotencyException;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.TransactionRequiredException;
import dev.idempotency.jdbc.dialect.Dialects;
import dev.idempotency.jdbc.dialect.SqlDialect;
import dev.idempotency.jdbc.dialect.TableName;
import dev.idempotency.jdbc.internal.Failures;
import dev.idempotency.jdbc.internal.JdbcExecutor;
import dev.idempotency.jdbc.internal.StatementLimits;
import dev.idempotency.jdbc.internal.PacketOverflow;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.LeasedCompletion;
import dev.idempotency.spi.PendingOperation;
import dev.idempotency.spi.TransactionalRecoveringStore;
import dev.idempotency.spi.RecoveryPoint;
import dev.idempotency.spi.TxSavepoint;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps key records in one table, read and written through the caller's own
 * {@link java.sql.Connection}, inside the caller's transaction.
 *
 * <p>The store never commits, rolls back, closes, or changes any setting of the caller's
 * connection (auto-commit, isolation, read-only). It refuses a connection in auto-commit mode, a
 * closed one and one that reports itself read-only, before writing anything; a read-only
 * transaction that the driver does not report (begun in SQL, a standby server) is named as such
 * from the database's error, with {@link TransactionRequiredException}.
 *
 * <p>The dialect is detected from each connection's metadata unless one is given. The table
 * ({@value SqlDialect#DEFAULT_TABLE} by default; {@code schema.table} allowed; see
 * {@link TableName}) must exist: create it with the dialect's DDL resource
 * ({@link SqlDialect#ddlResource()}, for Flyway or Liquibase) or with
 * {@link #createTableIfMissing(Connection)}.
 *
 * <p>The record is only as durable as the caller's commit. On the first connection to each database,
 * the store asks the database whether it acknowledges commits before they are durable
 * ({@link SqlDialect#durabilityQueries()}: H2's {@code WRITE_DELAY}, SQLite's {@code synchronous=OFF},
 * PostgreSQL's {@code fsync=off} or {@code synchronous_commit=off}, MariaDB's
 * {@code innodb_flush_log_at_trx_commit} other than 1). If it does, the store warns once through
 * SLF4J, and tells the engine's listener once ({@link IdempotencyListener#onNonDurableCommits}):
 * the engine hands the store its listener ({@link #heardBy}), so the listener is given to the
 * engine only. By default it then refuses every call
 * with {@link NonDurableCommitsException}, before anything is written, where the commits are lost
 * with the application's own process (an embedded H2 file database with its default
 * {@code WRITE_DELAY}), and goes on for the others; {@link Builder#durabilityCheck(DurabilityCheck)}
 * refuses them all, or none. The database is asked once per database, told apart by the connection's
 * JDBC URL ({@link java.sql.DatabaseMetaData#getURL()}, which the drivers answer without a round trip):
 * a store given connections to several databases checks each, whichever it saw first. The answers
 * are kept for the life of the store (for up to 64 databases; past that one is forgotten and asked
 * again): a setting changed later, or per session, is not seen.
 *
 * <p>Thread-safe; share one instance. Its configuration is immutable; it remembers only the answers
 * about durability (shared with the copies {@link #heardBy} makes) and whether it told its listener.
 */
public final class JdbcIdempotencyStore implements TransactionalRecoveringStore<Connection> {

    private static final Logger log = LoggerFactory.getLogger(JdbcIdempotencyStore.class);
    /** What a claim of one key reads. */
    private static final String KEY_RECORD = "the key's record";

    private final TableName table;
    private final @Nullable SqlDialect dialect;
    /** The executor of {@link #dialect}, if one is given. */
    private final @Nullable JdbcExecutor executor;
    private final DurabilityCheck durabilityCheck;
    private final Durabilities durability;
    /** The statement limit of each session, read once per physical connection; shared with the copies {@link #heardBy} makes. */
    private final StatementLimits statementLimits;
    /** Told once if commits are not durable: the engine's, given through {@link #heardBy}. */
    private final IdempotencyListener listener;

    private JdbcIdempotencyStore(TableName table, @Nullable SqlDialect dialect, DurabilityCheck durabilityCheck, Durabilities durability,
            StatementLimits statementLimits, IdempotencyListener listener) {
        this.table = table;
        this.dialect = dialect;
        this.executor = dialect == null ? null : JdbcExecutor.of(dialect);
        this.durabilityCheck = durabilityCheck;
        this.durability = durability;
        this.statementLimits = statementLimits;
        this.listener = listener;
    }

    /** @return a store on table {@value SqlDialect#DEFAULT_TABLE} with the dialect detected per connection */
    public static JdbcIdempotencyStore ofDefaults() {
        return builder().build();
    }

    /** @return a builder with the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return the configured table name */
    public TableName table() {
        return table;
    }

    /** @return the explicitly configured dialect, if any */
    public Optional<SqlDialect> dialect() {
        return Optional.ofNullable(dialect);
    }

    /**
     * Creates the table and its expiry index if they do not exist, with the connection's dialect.
     * Opt-in: call it once at startup. It runs DDL on the given connection; if that connection is
     * in a transaction, commit it afterwards.
     *
     * @param connection an open connection
     * @throws IdempotencyStoreException if the DDL fails
     */
    public void createTableIfMissing(Connection connection) {
        Objects.requireNonNull(connection, "connection");
        try (Statement s = connection.createStatement()) {
            for (String sql : executorFor(connection).dialect().ddlStatements(table)) {
                s.execute(sql);
            }
        } catch (SQLException e) {
            throw new IdempotencyStoreException(null, "could not create table '" + table + "'", e);
        }
    }

    /**
     * As {@link #createTableIfMissing(Connection)}, on a connection of its own that it commits.
     *
     * @param dataSource where to get the connection
     * @throws IdempotencyStoreException if the DDL fails
     */
    public void createTableIfMissing(DataSource dataSource) {
        Objects.requireNonNull(dataSource, "dataSource");
        try (Connection c = dataSource.getConnection()) {
            createTableIfMissing(c);
            if (!c.getAutoCommit()) {
                c.commit();
            }
        } catch (SQLException e) {
            throw new IdempotencyStoreException(null, "could not create table '" + table + "'", e);
        }
    }

    /**
     * @param connection a connection to the target database (only its metadata is read)
     * @return the DDL this store would run for that database
     */
    public String ddl(Connection connection) {
        return executorFor(connection).dialect().ddl(table);
    }

    /**
     * A copy of this store that tells {@code listener}, once, if the database acknowledges commits
     * before they are durable ({@link IdempotencyListener#onNonDurableCommits}); the engine calls it
     * with its own listener. The copy shares the table, the dialect, the durability check and the
     * database's answer (asked and logged once for both), and tells its listener even if this store
     * found the answer first (creating the table at startup, for example).
     *
     * @param listener the engine's listener
     * @return this store if it already tells {@code listener}; otherwise the copy
     */
    @Override
    public JdbcIdempotencyStore heardBy(IdempotencyListener listener) {
        Objects.requireNonNull(listener, "listener");
        return listener == this.listener ? this : new JdbcIdempotencyStore(table, dialect, durabilityCheck, durability, statementLimits,
                listener);
    }

    @Override
    public void checkTransaction(Connection tx, IdempotencyKey key) {
        try {
            if (tx.isClosed()) {
                throw new TransactionRequiredException(key, "the connection is closed; nothing was written");
            }
            if (tx.getAutoCommit()) {
                throw new TransactionRequiredException(key, "the connection is in auto-commit mode, so the key's record"
                        + " could not be committed atomically with your change; call setAutoCommit(false), run execute,"
                        + " then commit. Nothing was written");
            }
            if (tx.isReadOnly()) {
                throw new TransactionRequiredException(key, "the connection is read-only (setReadOnly(true), or a database"
                        + " opened read-only), so the key's record cannot be written; use a read-write connection."
                        + " Nothing was written");
            }
        } catch (SQLException e) {
            throw new IdempotencyStoreException(key, "could not inspect the connection", e);
        }
    }

    @Override
    public Claim claim(Connection tx, ClaimRequest request) {
        return forward(tx, request.key(), "claim the key", false, reading(request.key(), KEY_RECORD, d -> {
            sendPendingCompletion(tx);
            return d.claim(tx, table, request);
        }));
    }

    @Override
    public void complete(Connection tx, Completion completion) {
        JdbcExecutor d = executorFor(tx, completion.key());
        int rows;
        try {
            refuseOverPacketLimit(d, tx, completion);
            OwnedTransaction owned = OwnedTransaction.of(tx);
            if (owned != null && !owned.hasPending() && d.dialect().completesWithCommit()) {
                owned.defer(d, table, completion); // sent with the COMMIT, by JdbcTransactions
                return;
            }
            rows = d.complete(tx, table, completion);
        } catch (SQLException e) {
            throw translate(d, tx, completion.key(), "record the result", e);
        }
        requireOneRecord(completion, rows);
    }

    /**
     * Sends now a completion left for the commit of a transaction {@link JdbcTransactions} runs, before
     * that transaction claims another key: a later claim of the same key in the same transaction must
     * find the result recorded (and replay it), as it would have without the deferral.
     */
    private void sendPendingCompletion(Connection tx) throws SQLException {
        OwnedTransaction owned = OwnedTransaction.of(tx);
        if (owned == null || !owned.hasPending() || owned.writeLast() != null) {
            return;
        }
        Completion pending = owned.completion();
        int rows = owned.dialect().complete(tx, owned.table(), pending);
        owned.clear();
        requireOneRecord(pending, rows);
    }

    private void requireOneRecord(Completion completion, int rows) {
        if (rows != 1) {
            throw Failures.recordMissing(table, completion.key(), rows);
        }
    }

    /** Checks, before anything is sent, that the statement recording {@code completion} fits the server's packet limit. */
    private void refuseOverPacketLimit(JdbcExecutor d, Connection tx, Completion completion) throws SQLException {
        refuseOverPacketLimit(d.packetOverflow(statementLimits, tx, completion.key(), completion.codec(), completion.result()), completion.key(), ResultOverPacketLimitException.RESULT,
                completion.result(), ResultOverPacketLimitException.RELEASED);
    }

    /** The same for lease mode's result: the engine records the operation as failed instead. */
    private void refuseOverPacketLimit(JdbcExecutor d, Connection tx, LeasedCompletion completion) throws SQLException {
        refuseOverPacketLimit(d.packetOverflow(statementLimits, tx, completion.key(), completion.codec(), completion.result()), completion.key(), ResultOverPacketLimitException.RESULT,
                completion.result(), ResultOverPacketLimitException.NOTHING_SENT);
    }

    /** Throws {@code overflow}, if there is one, for {@code value}: {@code what} names it, {@code aftermath} says what was done. */
    private static void refuseOverPacketLimit(Optional<PacketOverflow> overflow, IdempotencyKey key, String what,
                                              byte[] value, String aftermath) {
        if (overflow.isPresent()) {
            PacketOverflow o = overflow.get();
            throw new ResultOverPacketLimitException(key, what, value.length, o.statementBytes(), o.limitBytes(), o.setting(),
                    aftermath);
        }
    }

    /**
     * Writes the completed record of a write-last transaction. In a transaction that
     * {@link JdbcTransactions} runs, on a dialect that sends the write with the {@code COMMIT}
     * ({@link SqlDialect#writesLastWithCommit()}: PostgreSQL), the write is left to the commit and
     * {@link Claim.Acquired} answered at once; the commit then throws
     * {@link dev.idempotency.spi.LastWriteRefusedException} if the key has a record. Otherwise the
     * dialect writes it now (inserting the completed record first, or claiming and completing).
     */
    @Override
    public Claim writeLast(Connection tx, ClaimRequest request, Completion completion) {
        JdbcExecutor d = executorFor(tx, request.key());
        try {
            refuseOverPacketLimit(d, tx, completion);
            OwnedTransaction owned = OwnedTransaction.of(tx);
            if (owned != null && !owned.hasPending() && d.dialect().writesLastWithCommit()) {
                owned.deferWriteLast(d, table, request, completion); // sent with the COMMIT, by JdbcTransactions
                return Claim.acquired();
            }
            return d.writeLast(tx, table, request, completion);
        } catch (SQLException e) {
            if (d.isRecordMissing(e)) {
                throw new IdempotencyStoreException(request.key(), "the record claimed to write the result was not found in"
                        + " table '" + table + "' (was it deleted concurrently?)", e);
            }
            throw translate(d, tx, request.key(), "write the key's record", e);
        } catch (IllegalArgumentException corrupt) {
            throw corrupt(request.key(), KEY_RECORD, corrupt);
        }
    }

    @Override
    public List<Claim> claimAll(Connection tx, List<ClaimRequest> requests) {
        if (requests.isEmpty()) {
            return List.of();
        }
        IdempotencyKey first = requests.get(0).key();
        return forward(tx, first, "claim a chunk of " + requests.size() + " keys (from the first)", false,
                reading(first, "a record of the chunk", d -> {
                    sendPendingCompletion(tx);
                    return d.claimAll(tx, table, requests);
                }));
    }

    @Override
    public void completeAll(Connection tx, List<Completion> completions) {
        if (completions.isEmpty()) {
            return;
        }
        IdempotencyKey first = completions.get(0).key();
        int missing = forward(tx, first, "record the results of a chunk of " + completions.size() + " keys (from the first)", false,
                d -> d.completeAll(tx, table, completions));
        if (missing != 0) {
            throw new IdempotencyStoreException(first, missing + " claimed records of the chunk were not found when recording"
                    + " their results in table '" + table + "'; were they deleted concurrently?", null);
        }
    }

    @Override
    public void release(Connection tx, IdempotencyKey key) {
        JdbcExecutor d = executorFor(tx, key);
        try {
            d.release(tx, table, key);
        } catch (SQLException e) {
            throw translate(d, tx, key, "release the claim", e);
        }
    }

    @Override
    public TxSavepoint savepoint(Connection tx) {
        Savepoint savepoint;
        try {
            savepoint = tx.setSavepoint();
        } catch (SQLException e) {
            throw new IdempotencyStoreException(null, "could not set a savepoint, needed to undo the work of a final failure", e);
        }
        return new TxSavepoint() {
            @Override
            public void rollback() {
                try {
                    tx.rollback(savepoint);
                } catch (SQLException e) {
                    throw new IdempotencyStoreException(null, "could not roll back to the savepoint before the work", e);
                }
            }

            @Override
            public void release() {
                try {
                    tx.releaseSavepoint(savepoint);
                } catch (SQLException | UnsupportedOperationException ignored) {
                    // Optional: the savepoint ends with the transaction anyway.
                }
            }
        };
    }

    @Override
    public int purgeExpired(Connection tx, Instant now, int limit) {
        return forward(tx, null, "purge expired records", false, d -> {
            // the abandoned claims first, counted by their own delete; then the rest of the batch
            int abandoned = d.purgeExpiredAbandonedClaims(tx, table, now, limit);
            int purged = abandoned + (abandoned < limit ? d.purgeExpired(tx, table, now, limit - abandoned) : 0);
            if (abandoned > 0) {
                log.warn("The purge of table '{}' deleted {} abandoned claims: claims committed without their result, each of"
                        + " which refused its key's retries until it expired; a work ended its caller's transaction"
                        + " (see AbandonedClaimException)", table, abandoned);
                try {
                    listener.onAbandonedClaimsPurged(abandoned);
                } catch (RuntimeException e) {
                    log.warn("IdempotencyListener.onAbandonedClaimsPurged threw; ignored", e);
                }
            }
            return purged;
        });
    }

    // ---- lease mode: every time is the database server's --------------------------------------------

    @Override
    public LeaseClaim claimLease(Connection tx, LeaseRequest request) {
        return forward(tx, request.key(), "claim the key's lease", true, reading(request.key(), KEY_RECORD,
                d -> d.claimLease(tx, table, request)));
    }

    @Override
    public Optional<Instant> extendLease(Connection tx, IdempotencyKey key, String ownerToken, Duration lease) {
        return forward(tx, key, "extend the lease", true,
                d -> d.extendLease(tx, table, key, Objects.requireNonNull(ownerToken, "ownerToken"), lease));
    }

    @Override
    public boolean checkpoint(Connection tx, IdempotencyKey key, String ownerToken, RecoveryPoint point) {
        return forward(tx, key, "record the recovery point", true, d -> {
            // the engine rolls the claim's transaction back: nothing of the key is recorded, and the call does not run
            refuseOverPacketLimit(d.packetOverflow(statementLimits, tx, key, point.codec(), point.state()), key, ResultOverPacketLimitException.RECOVERY_POINT, point.state(),
                    ResultOverPacketLimitException.NOTHING_SENT);
            return d.checkpoint(tx, table, key, Objects.requireNonNull(ownerToken, "ownerToken"), point);
        });
    }

    @Override
    public Optional<Instant> completeLeased(Connection tx, String ownerToken, LeasedCompletion completion) {
        return forward(tx, completion.key(), "record the result", true, d -> {
            refuseOverPacketLimit(d, tx, completion);
            return d.completeLeased(tx, table, Objects.requireNonNull(ownerToken, "ownerToken"), completion);
        });
    }

    @Override
    public boolean enlist(Connection tx, IdempotencyKey key, String ownerToken, String operation) {
        JdbcExecutor d = executorFor(tx, key);
        try {
            return d.enlist(tx, table, key, Objects.requireNonNull(ownerToken, "ownerToken"), Objects.requireNonNull(operation, "operation"));
        } catch (SQLException e) {
            throw translatePending(d, tx, key, "record the named operation", e);
        }
    }

    @Override
    public void delist(Connection tx, IdempotencyKey key) {
        JdbcExecutor d = executorFor(tx, key);
        try {
            d.delist(tx, table, key);
        } catch (SQLException e) {
            throw translatePending(d, tx, key, "remove the named operation", e);
        }
    }

    @Override
    public List<PendingOperation> pending(Connection tx, IdempotencyKey after, int limit) {
        JdbcExecutor d = executorFor(tx, after);
        try {
            return d.pending(tx, table, after, limit);
        } catch (SQLException e) {
            throw translatePending(d, tx, after, "list the named operations in progress", e);
        }
    }

    /** As {@link #translate}, for the table of named operations, which a store created before it lacks. */
    private IdempotencyException translatePending(JdbcExecutor d, Connection tx, IdempotencyKey key, String what, SQLException e) {
        return StoreFailures.ofPending(table, d, tx, key, what, e);
    }

    @Override
    public boolean releaseLease(Connection tx, IdempotencyKey key, String ownerToken) {
        return forward(tx, key, "end the lease", true, d -> d.releaseLease(tx, table, key, Objects.requireNonNull(ownerToken, "ownerToken")));
    }

    private JdbcExecutor executorFor(Connection c, @Nullable IdempotencyKey key) {
        JdbcExecutor d = executor;
        if (d == null) {
            try {
                d = JdbcExecutor.of(Dialects.detect(c));
            } catch (SQLException e) {
                throw new IdempotencyStoreException(key, "could not read the database's metadata to choose a dialect", e);
            }
        }
        durability.check(c, d, key, this, listener);
        return d;
    }

    private JdbcExecutor executorFor(Connection c) {
        return executorFor(c, null);
    }

    /** A primitive of the executor, forwarded to by {@link #forward}. */
    private interface Primitive<T> {
        T run(JdbcExecutor d) throws SQLException;
    }

    /**
     * @param leased whether {@code primitive} is a lease primitive, which always runs in a transaction
     *     of the library's own
     * @return what {@code primitive} answers on the connection's executor; its database error, a
     *     failure to {@code what}, translated as {@link #translate} says
     */
    private <T> T forward(Connection tx, @Nullable IdempotencyKey key, String what, boolean leased, Primitive<T> primitive) {
        JdbcExecutor d = executorFor(tx, key);
        try {
            return primitive.run(d);
        } catch (SQLException e) {
            throw translate(d, leased ? null : tx, key, what, e);
        }
    }

    /** @return {@code primitive}, a value that this library did not write, read in {@code records}, named as such */
    private <T> Primitive<T> reading(IdempotencyKey key, String records, Primitive<T> primitive) {
        return d -> {
            try {
                return primitive.run(d);
            } catch (IllegalArgumentException corrupt) {
                throw corrupt(key, records, corrupt);
            }
        };
    }

    private IdempotencyStoreException corrupt(IdempotencyKey key, String records, IllegalArgumentException corrupt) {
        return new IdempotencyStoreException(key, records + " in table '" + table + "' holds a value this library did not write ("
                + corrupt.getMessage() + ")", corrupt);
    }

    /**
     * @param tx the caller's connection, or {@code null} for a lease primitive, which always runs in
     *     a transaction of the library's own
     */
    private IdempotencyException translate(JdbcExecutor d, @Nullable Connection tx, IdempotencyKey key, String what, SQLException e) {
        return StoreFailures.of(table, d, tx, key, what, e);
    }

    @Override
    public String toString() {
        return "JdbcIdempotencyStore[table=" + table + ", dialect=" + (dialect == null ? "detected" : dialect.name())
                + ", durabilityCheck=" + durabilityCheck + "]";
    }

    /** Builds a {@link JdbcIdempotencyStore}. Not thread-safe; the store it builds is. */
    public static final class Builder {
        private TableName table = TableName.DEFAULT;
        private SqlDialect dialect;
        private DurabilityCheck durabilityCheck = DurabilityCheck.REFUSE_EMBEDDED;

        private Builder() {
        }

        /**
         * @param check which databases that acknowledge commits before they are durable are refused,
         *     with {@link NonDurableCommitsException} before anything is written: by default
         *     {@link DurabilityCheck#REFUSE_EMBEDDED}, those that lose commits with the application's
         *     own process; {@link DurabilityCheck#REFUSE_ANY} every one; {@link DurabilityCheck#WARN_ONLY}
         *     none (each is warned about once, whatever the check)
         * @return this builder
         */
        public Builder durabilityCheck(DurabilityCheck check) {
            this.durabilityCheck = Objects.requireNonNull(check, "check");
            return this;
        }

        /**
         * @param table {@code table} or {@code schema.table}, plain SQL identifiers only, none of them a
         *     reserved word; see {@link TableName#of(String)}
         * @return this builder
         * @throws IllegalArgumentException if the name is not a plain identifier, or is a reserved word
         */
        public Builder table(String table) {
            return table(TableName.of(table));
        }

        /**
         * @param table the table name, already checked
         * @return this builder
         */
        public Builder table(TableName table) {
            this.table = Objects.requireNonNull(table, "table");
            return this;
        }

        /**
         * @param dialect the dialect to use instead of detecting one per connection
         * @return this builder
         */
        public Builder dialect(SqlDialect dialect) {
            this.dialect = Objects.requireNonNull(dialect, "dialect");
            return this;
        }

        /** @return the store */
        public JdbcIdempotencyStore build() {
            return new JdbcIdempotencyStore(table, dialect, durabilityCheck, new Durabilities(table, durabilityCheck),
                    new StatementLimits(), IdempotencyListener.NONE);
        }
    }
}
