package dev.idempotency.jdbc.dialect;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.jdbc.internal.Ddl;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.IntFunction;
import org.jspecify.annotations.Nullable;

/**
 * A description of one database: the SQL texts of its statements (with the parameters the executor
 * binds, named on each), how its errors are told apart ({@link SqlError}), its clock, how it is
 * asked about durability, and small strategy values where databases differ ({@link ClaimStrategy},
 * {@link ChunkClaiming}, {@link LockWait}). It runs nothing: the store's one executor runs every
 * algorithm, reading it, so a dialect of one's own (a database this library does not ship)
 * overrides only what differs from this base, which answers in standard SQL. Every public method
 * here is that stable description; none names a JDBC type.
 *
 * <p>Transaction safety comes first: the store runs inside the caller's transaction, and on some
 * databases (PostgreSQL) one failed statement aborts the whole transaction. So a duplicate key must
 * show up as a row count, or be met under a savepoint (the executor sets one where
 * {@link #failedStatementAbortsTransaction()}), or come from a database whose failed statements are
 * rolled back alone.
 *
 * <p>Times are stored as epoch milliseconds ({@code BIGINT}), so that neither the JVM's nor the
 * database session's time zone can shift an expiry. Statements bind the record's columns in the
 * order of {@link #COLUMNS}; status is the record status' name. <i>The claim's columns</i> are scope,
 * key id, fingerprint, status, created and expires, bound from 1. An insert <i>claims as named
 * above</i> if its update count 1 says it inserted, and a key has a record if it counts otherwise or
 * fails with a duplicate. A <i>now</i> that a statement binds judges a record without an owner token;
 * one with a token (lease mode's) is judged by the database's clock.
 *
 * <p>Dialects are immutable and thread-safe.
 */
public abstract class SqlDialect {

    /**
     * The columns every dialect's table has, in the order a record is read; the last,
     * {@code owner_token}, tells a record that lease mode wrote, whose times are the database's.
     */
    public static final String COLUMNS =
            "scope, key_id, fingerprint, status, result_codec, result, created_at, completed_at, expires_at, lease_until, owner_token";

    /** The default table name, as written in the DDL resources. */
    public static final String DEFAULT_TABLE = "idempotency_record";

    /** @return the dialect's name, as logged and used in the DDL resource's file name */
    public abstract String name();

    /**
     * @return the class-path location of this dialect's DDL, written for {@value #DEFAULT_TABLE}; read
     *     through the dialect's own class first, so a dialect of one's own finds it in its own module
     */
    public String ddlResource() {
        return "dev/idempotency/jdbc/ddl/" + name().toLowerCase(Locale.ROOT) + ".sql";
    }

    /**
     * @param table the table
     * @return the DDL statements, separated by {@code ;}, that create the table, its expiry index,
     *     and the table of named operations in progress ({@link TableName#pending()})
     */
    public String ddl(TableName table) {
        return Ddl.of(this, ddlResource(), table);
    }

    /**
     * @param table the table
     * @return {@link #ddl(TableName)} as the statements a driver runs one by one, comment lines
     *     left out (a JDBC {@code Statement} or an R2DBC one takes a single statement)
     */
    public final List<String> ddlStatements(TableName table) {
        return List.of(Ddl.statements(ddl(table)));
    }

    // ---- errors --------------------------------------------------------------------------------

    /**
     * @param e a failure of an insert
     * @return whether it reports a duplicate primary key (base: 23505)
     */
    public boolean isDuplicateKey(SqlError e) {
        return e.hasState("23505");
    }

    /**
     * @param e a failure of a statement that may have waited for a lock
     * @return whether the wait ran out, or the query timeout cancelled it (base: 57014, HYT00, HYT01, 55P03)
     */
    public boolean isLockTimeout(SqlError e) {
        return e.hasState("57014") || e.hasState("HYT00") || e.hasState("HYT01") || e.hasState("55P03");
    }

    /**
     * @param e any failure
     * @return whether the database aborted the transaction to resolve a conflict (base: class 40)
     */
    public boolean isTransactionConflict(SqlError e) {
        return e.sqlState() != null && e.sqlState().startsWith("40");
    }

    /**
     * @param e any failure
     * @return whether it reports that the table does not exist (base: 42S02, 42P01)
     */
    public boolean isMissingTable(SqlError e) {
        return e.hasState("42S02") || e.hasState("42P01");
    }

    /**
     * @param e any failure
     * @return whether nothing can be written: a read-only transaction or database, a standby (base: 25006)
     */
    public boolean isReadOnly(SqlError e) {
        return e.hasState("25006");
    }

    /**
     * @param e a failure of a write sent with the commit ({@link #completionWithCommit}, {@link #lastWriteWithCommit})
     * @return whether it reports the record not found (or, for the last write, found unexpired); base: 02000
     */
    public boolean isRecordMissing(SqlError e) {
        return e.hasState("02000");
    }

    /** @return whether a failed statement aborts the whole transaction (base: {@code true}); if so, savepoints guard them */
    public boolean failedStatementAbortsTransaction() {
        return true;
    }

    // ---- clock, durability, statement limit -----------------------------------------------------

    /**
     * @return a query of one row and one {@code BIGINT} column: the database's current time in epoch
     *     milliseconds, by which lease mode judges every lease; or {@code null} (the base) to read
     *     {@code CURRENT_TIMESTAMP} as a timestamp with time zone
     */
    public @Nullable String currentTimeMillisQuery() {
        return null;
    }

    /**
     * @return queries of one row and one column, run once per database (reading only), whose answers
     *     (as text; {@code null} for no row) {@link #nonDurableCommits(List)} judges. Base: none
     */
    public List<String> durabilityQueries() {
        return List.of();
    }

    /**
     * Whether the database acknowledges a commit before it is durable: then a crash can lose a
     * record after its commit returned, and the retry runs the work again.
     *
     * @param answers the answers to {@link #durabilityQueries()}, in order
     * @return the setting and how to make commits durable, if commits are acknowledged early; empty
     *     if they are durable or the database cannot tell (the base)
     */
    public Optional<String> nonDurableCommits(List<@Nullable String> answers) {
        return Optional.empty();
    }

    /**
     * @param inProcessSession whether the connection is a session of a database in this process (told for H2's)
     * @return whether non-durable commits die with the application's process (refused by default). Base: no
     */
    public boolean nonDurableCommitsDieWithTheApplication(boolean inProcessSession) {
        return false;
    }

    /**
     * @return a query of one row and one {@code BIGINT} column, run once per connection: the largest
     *     statement the server accepts, in bytes; or {@code null} (the base) if there is no such limit
     */
    public @Nullable String statementLimitQuery() {
        return null;
    }

    /** @return the server setting that sets the limit of {@link #statementLimitQuery()}; base: {@code max_allowed_packet} */
    public String statementLimitSetting() {
        return "max_allowed_packet";
    }

    /**
     * @param key the key
     * @param codec the codec
     * @param value the encoded value
     * @return an upper bound of the statement's size
     */
    public long statementBytes(IdempotencyKey key, String codec, byte[] value) {
        return 1024L + 2L * (key.scope().length() + key.id().length() + codec.length()) + value.length;
    }

    /**
     * A statement that may wait for another transaction's lock, with its wait bounded in its own
     * text, for an executor that has no per-statement timeout (the R2DBC one, whose drivers offer
     * none; {@link #lockWait()} is the JDBC executor's). A wait that runs out must fail the statement
     * as {@link #isLockTimeout} recognises.
     *
     * @param statement the statement, with its {@code ?} parameters
     * @param lockTimeout the policy's lock timeout
     * @return the statement, bounded; or {@code null} (the base) if the database cannot bound one
     *     statement's wait in its text, and the database's own lock timeout then bounds it
     */
    public @Nullable String boundedLockWait(String statement, Duration lockTimeout) {
        return null;
    }

    // ---- strategies ------------------------------------------------------------------------------

    /** @return the shape of the single claim; base: {@link ClaimStrategy#READ_FIRST} */
    public ClaimStrategy claimStrategy() {
        return ClaimStrategy.READ_FIRST;
    }

    /** @return how a slice of a chunk is claimed; base: {@link ChunkClaiming#READ_FIRST} */
    public ChunkClaiming chunkClaiming() {
        return ChunkClaiming.READ_FIRST;
    }

    /** @return how a statement's wait for another transaction's lock is bounded; base: {@link LockWait#QUERY_TIMEOUT} */
    public LockWait lockWait() {
        return LockWait.QUERY_TIMEOUT;
    }

    /**
     * @return whether, in a transaction that {@code JdbcTransactions} runs, the completion goes with
     *     the {@code COMMIT} (in one round trip with {@link #completionWithCommit}, else just before
     *     it) instead of at once. Base: no
     */
    public boolean completesWithCommit() {
        return false;
    }

    /** @return whether a write-last record in such a transaction goes with the {@code COMMIT} likewise. Base: no */
    public boolean writesLastWithCommit() {
        return false;
    }

    /** @return whether the claim writes to a record it only found (MariaDB counts duplicates); lease claims undo it. Base: no */
    public boolean claimCountsDuplicates() {
        return false;
    }

    /**
     * @param key a key
     * @return why the database cannot keep it apart from others, if so (refused, 22023); base: empty
     */
    public Optional<String> keyRefusal(IdempotencyKey key) {
        return Optional.empty();
    }

    // ---- SQL texts -------------------------------------------------------------------------------

    /**
     * @param table the table
     * @return the read-first claims' insert of an in-progress record, binding the claim's columns,
     *     which claims as named above. Base: a plain {@code INSERT}
     */
    public String claimInsert(TableName table) {
        return multiRowClaimInsert(table, 1);
    }

    /**
     * @param exclusive whether the read takes the write lock, else a shared one
     * @return what {@link ClaimStrategy#LOCKING_READ_FIRST} appends to its {@code SELECT}; base: {@code FOR UPDATE}, {@code FOR SHARE}
     */
    public String lockingRead(boolean exclusive) {
        return exclusive ? " FOR UPDATE" : " FOR SHARE";
    }

    /** @return the key lock of {@link ClaimStrategy#KEY_LOCK_FIRST}; base: none */
    public @Nullable KeyLock keyLock() {
        return null;
    }

    /**
     * @param table the table
     * @param lockTimeout the policy's lock timeout, which the statements bound their own waits by
     * @return for {@link ClaimStrategy#ONE_ROUND_TRIP}: statements sent in one round trip, a query
     *     (skipped), the insert (update count 1 if it claimed, 0 if the key has a record), then one
     *     row whose columns from the second on are the record in {@link #COLUMNS} (all {@code NULL}
     *     if none); they bind the claim's columns, then scope and key id (7, 8). Base: none
     */
    public @Nullable String claimStatement(TableName table, Duration lockTimeout) {
        return null;
    }

    /**
     * @param table the table
     * @return for {@link ClaimStrategy#UPSERT_FIRST}: an upsert that inserts the key, takes over its
     *     expired record (clearing {@code owner_token}, {@code lease_until} and {@code phase}), or
     *     changes nothing (update count 1 if it claimed), taking the write lock in every case,
     *     binding the claim's columns and now (7). Base: none
     */
    public @Nullable String claimUpsert(TableName table) {
        return null;
    }

    /**
     * @param table the table
     * @return for {@link ChunkClaiming#INSERT_FIRST}: an insert of any number of keys from six array
     *     parameters (scope, key id, fingerprint, status as {@code varchar}; created, expires as
     *     {@code int8}) that skips keys with a record and returns scope and key id of each row inserted
     */
    public String claimInsertReturningKeys(TableName table) {
        throw new UnsupportedOperationException(name() + " does not claim a chunk by inserting first");
    }

    /**
     * @param table the table
     * @return a statement that records any number of completions from seven array parameters (scope,
     *     key id, status, codec as {@code varchar}; result {@code bytea}; completed, expires {@code int8}),
     *     its update count the records written; or {@code null} (the base)
     */
    public @Nullable String completionArrays(TableName table) {
        return null;
    }

    /**
     * @param table the table
     * @return the statement that records n completions (at most 500, and 4 MiB of results), binding
     *     per completion scope, key id, status, codec, result, completed and expires, its update count
     *     the records written; or {@code null} (the base) for a JDBC batch of single updates
     */
    public @Nullable IntFunction<String> completionRowSets(TableName table) {
        return null;
    }

    /**
     * @param table the table
     * @return an insert of the completed record ({@link #completedRecordInsert}'s parameters) that a
     *     write-last runs before claiming, which claims as named above. Or {@code null} (the base):
     *     claim, then complete
     */
    public @Nullable String completedRecordInsertFirst(TableName table) {
        return null;
    }

    /**
     * @param table the table
     * @return a statement that records a completion and then commits, in one round trip, binding
     *     status, codec, result, completed, expires, then scope and key id (from 1); a record not
     *     found must fail it, as {@link #isRecordMissing} recognises, before its {@code COMMIT}. Or
     *     {@code null} (the base): the update, then a commit
     */
    public @Nullable String completionWithCommit(TableName table) {
        return null;
    }

    /**
     * @param table the table
     * @param lockTimeout the policy's lock timeout, which the statement bounds its own waits by
     * @return a statement that writes the completed record (replacing an expired one) and commits,
     *     in one round trip, binding {@link #completedRecordInsert}'s parameters (1 to 9) and now (10);
     *     an unexpired record must fail it as {@link #isRecordMissing} recognises, a wait that runs
     *     out as {@link #isLockTimeout} does. Or {@code null} (the base): write last, then commit
     */
    public @Nullable String lastWriteWithCommit(TableName table, Duration lockTimeout) {
        return null;
    }

    /**
     * @param table the table
     * @param limit the batch size
     * @param expired the condition, on the row's own columns (unqualified), that a record has
     *     expired by the clock that timed it (lease mode's records by the database's): its
     *     parameters are the executor's; use it in the batch's selection, and again on the deleted
     *     row, so that a record taken over while the delete waited survives
     * @param only a condition to add to the batch's selection, with its leading {@code " AND "}, or
     *     the empty string; it has no parameters
     * @return a {@code DELETE} of at most {@code limit} expired records that meet {@code only}, with
     *     no parameters but those of {@code expired}. Base: a {@code FETCH FIRST} subquery on the
     *     expiry index
     */
    public String purgeStatement(TableName table, int limit, String expired, String only) {
        return "DELETE FROM " + table + " WHERE (scope, key_id) IN (SELECT scope, key_id FROM " + table + " WHERE " + expired
                + only + " ORDER BY expires_at FETCH FIRST " + limit + " ROWS ONLY) AND " + expired;
    }

    /** @return a statement that reads and writes nothing, for {@link LockWait#CANCEL}'s late cancel; base: {@code VALUES 0} */
    public String noOpStatement() {
        return "VALUES 0";
    }

    /**
     * @param table the table
     * @param rows how many keys
     * @return {@code INSERT INTO table (...) VALUES (...), ...} of {@code rows} in-progress records, each binding the claim's columns
     */
    public static String multiRowClaimInsert(TableName table, int rows) {
        return "INSERT INTO " + table + " (scope, key_id, fingerprint, status, created_at, expires_at) VALUES "
                + String.join(", ", Collections.nCopies(rows, "(?, ?, ?, ?, ?, ?)"));
    }

    /**
     * @param table the table
     * @return {@code INSERT} of a completed record, binding scope, key id, fingerprint, status, codec,
     *     result, created, completed and expires from 1
     */
    public static String completedRecordInsert(TableName table) {
        return "INSERT INTO " + table + " (scope, key_id, fingerprint, status, result_codec, result, created_at, completed_at,"
                + " expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
    }

    @Override
    public String toString() {
        return name() + " dialect";
    }
}
