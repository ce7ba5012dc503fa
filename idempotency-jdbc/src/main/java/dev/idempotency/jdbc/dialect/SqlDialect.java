package dev.idempotency.jdbc.dialect;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.LeasedCompletion;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.PendingOperation;
import dev.idempotency.spi.RecoveryPoint;
import dev.idempotency.spi.StoredRecord;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.IntFunction;
import org.jspecify.annotations.Nullable;

/**
 * How the JDBC store speaks to one database. This base class answers in standard SQL; each
 * database's subclass overrides only what differs. The store never branches on the database: every
 * difference lives here.
 *
 * <p>Transaction safety comes first: the store runs inside the caller's transaction, and on some
 * databases (PostgreSQL) one failed statement aborts the whole transaction. So a duplicate key must
 * show up as a row count, or be met under a savepoint, or come from a database whose failed
 * statements are rolled back alone ({@link #failedStatementAbortsTransaction()} is {@code false}).
 *
 * <p>Times are stored as epoch milliseconds ({@code BIGINT}), so that neither the JVM's nor the
 * database session's time zone can shift an expiry.
 *
 * <p>The base claim costs, on a first execution, a {@code SELECT} that finds nothing, an
 * {@code INSERT}, and the completing {@code UPDATE}; on a replay, one {@code SELECT}.
 *
 * <p>Dialects are thread-safe; they keep no state but caches of what a connection's server
 * reports.
 */
public abstract class SqlDialect {

    /** The columns every dialect's table has, in the order {@link #readRecord} expects. */
    static final String COLUMNS =
            "scope, key_id, fingerprint, status, result_codec, result, created_at, completed_at, expires_at, lease_until";

    /** @return the dialect's name, as logged and used in the DDL resource's file name */
    public abstract String name();

    /**
     * @return the classpath location of this dialect's DDL, written for the default table name
     *     {@code idempotency_record}
     */
    public String ddlResource() {
        return "dev/idempotency/jdbc/ddl/" + name().toLowerCase(Locale.ROOT) + ".sql";
    }

    /**
     * @param table the table
     * @return the DDL statements that create the table and its expiry index, and the table of named
     *     operations in progress ({@link TableName#pending()})
     */
    public String ddl(TableName table) {
        String qualified = table.qualified();
        String simple = table.simpleName();
        // Whole names only: the table, and the names derived from it (index, constraint), which
        // take the unqualified name.
        String pending = table.pending().qualified();
        return DEFAULT_NAMES.matcher(readResource(ddlResource())).replaceAll(m -> java.util.regex.Matcher.quoteReplacement(
                m.group(1) == null ? qualified : TableName.PENDING_SUFFIX.equals(m.group(1)) ? pending : simple + m.group(1)));
    }

    private static final java.util.regex.Pattern DEFAULT_NAMES =
            java.util.regex.Pattern.compile("\\bidempotency_record(_[a-z]+)?\\b");

    /** The default table name, as written in the DDL resources. */
    public static final String DEFAULT_TABLE = "idempotency_record";

    // ---- questions about errors -------------------------------------------------------------

    /**
     * @param e a failure of an {@code INSERT}
     * @return whether it reports a duplicate primary key
     */
    public boolean isDuplicateKey(SQLException e) {
        return "23505".equals(e.getSQLState());
    }

    /**
     * @param e a failure of a statement that may have waited for a lock
     * @return whether it reports that the wait ran out (or was cancelled by the query timeout)
     */
    public boolean isLockTimeout(SQLException e) {
        String state = e.getSQLState();
        return "57014".equals(state) || "HYT00".equals(state) || "HYT01".equals(state) || "55P03".equals(state);
    }

    /**
     * @param e any failure
     * @return whether the database aborted the transaction to resolve a conflict (serialization
     *     failure, deadlock): the caller may retry the whole transaction
     */
    public boolean isTransactionConflict(SQLException e) {
        String state = e.getSQLState();
        return state != null && state.startsWith("40");
    }

    /**
     * @param e any failure
     * @return whether it reports that the table does not exist
     */
    public boolean isMissingTable(SQLException e) {
        return "42S02".equals(e.getSQLState()) || "42P01".equals(e.getSQLState());
    }

    /**
     * @param e any failure
     * @return whether it reports that nothing can be written: a read-only transaction, a database
     *     opened read-only, a standby server (SQLState 25006 in the base)
     */
    public boolean isReadOnly(SQLException e) {
        return "25006".equals(e.getSQLState());
    }

    /**
     * Asks the database whether it acknowledges a commit before the commit is durable: then a
     * crash (of the process, for an embedded database; of the server or its machine, for a server)
     * can lose a transaction after its commit returned, its key's record with it, and the retry runs
     * the work again. The record is only as durable as the commit (docs/contract.md, section 7).
     * Only reads; must not fail on a database that has no such setting. The base knows no setting
     * and answers empty.
     *
     * @param c a connection to the database, possibly in the caller's transaction
     * @return the setting and how to make commits durable, if commits are acknowledged early; empty
     *     if they are durable or the database cannot tell
     * @throws SQLException if the database cannot be asked
     */
    public Optional<String> nonDurableCommits(Connection c) throws SQLException {
        return Optional.empty();
    }

    /**
     * Asked only after {@link #nonDurableCommits} reported a setting: whether those commits are lost
     * when the application's own process dies, because the database runs inside it (an embedded
     * database), rather than only when a database server or its machine crashes. The default
     * {@link dev.idempotency.jdbc.DurabilityCheck} refuses such a database. The base answers
     * {@code false}.
     *
     * @param c a connection of the database, in any state; nothing is written
     * @return whether the non-durable commits die with the application
     * @throws SQLException if the database cannot be asked
     */
    public boolean nonDurableCommitsDieWithTheApplication(Connection c) throws SQLException {
        return false;
    }

    /**
     * @param c a connection
     * @param sql a query of one row and one column
     * @return that value as text, or {@code null}
     * @throws SQLException if the query fails
     */
    static String queryText(Connection c, String sql) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(sql); ResultSet rs = s.executeQuery()) {
            return rs.next() ? rs.getString(1) : null;
        }
    }

    /**
     * @return whether a failed statement aborts the whole transaction (PostgreSQL); if so, a
     *     duplicate-key insert is run under a savepoint unless the dialect overrides the claim
     */
    protected boolean failedStatementAbortsTransaction() {
        return true;
    }

    // ---- the claim ---------------------------------------------------------------------------

    /**
     * Claims the key, or finds its record, in the shape the dialect's SQL chooses ({@link Claims}):
     * with its {@link #claimStatement}, one statement; with its {@link #claimUpsert}, an upsert and
     * then a read; else, as the base does, select; if absent, insert ({@link #claimInsert}); if
     * expired, take over. A duplicate on insert (a concurrent claimer committed) means select again.
     *
     * @param c the caller's connection, in a transaction
     * @param table the table
     * @param request the attempt
     * @return the claim
     * @throws SQLException if a statement fails for another reason than a duplicate or a lock timeout
     */
    public Claim claim(Connection c, TableName table, ClaimRequest request) throws SQLException {
        return Claims.claim(this, c, table, request);
    }

    /**
     * The read-first claim described at {@link #claim}, whatever SQL the dialect gives.
     *
     * @param c the caller's connection, in a transaction
     * @param table the table
     * @param request the attempt
     * @return the claim
     * @throws SQLException if a statement fails for another reason than a duplicate or a lock timeout
     */
    final Claim claimReadingFirst(Connection c, TableName table, ClaimRequest request) throws SQLException {
        return Claims.readingFirst(this, c, table, request);
    }

    /**
     * @param table the table
     * @param lockTimeout the policy's lock timeout, which the statements bound their own lock waits by
     * @return statements sent in one round trip that claim the key by inserting it: first a query
     *     (which the claim skips), then the insert, whose update count is 1 if it claimed the key and
     *     0 if the key has a record, then a query of one row whose columns from the second on are the
     *     key's record in the columns of {@link #COLUMNS} (all {@code NULL} if it has none), as a
     *     statement after the insert sees it. An expired record is then taken over by
     *     {@link #takeOver}. They bind the claim's columns (scope, key id, fingerprint, status,
     *     created, expires; 1 to 6), then scope and key id (7, 8). Or {@code null}, the base: another
     *     shape of claim
     */
    @Nullable String claimStatement(TableName table, Duration lockTimeout) {
        return null;
    }

    /**
     * @param table the table
     * @return an upsert that inserts the key, or takes over its expired record, or changes nothing if
     *     an unexpired record exists (update count 1 if it claimed), taking the write lock in every
     *     case; it binds the claim's columns (scope, key id, fingerprint, status, created, expires;
     *     1 to 6) and now (7). The record it did not claim is then read. Or {@code null}, the base:
     *     another shape of claim
     */
    protected @Nullable String claimUpsert(TableName table) {
        return null;
    }

    /**
     * Reads the key's record as this transaction sees it.
     *
     * @param c the connection
     * @param table the table
     * @param key the key
     * @return the record, or {@code null}
     * @throws SQLException if the query fails
     */
    @Nullable StoredRecord select(Connection c, TableName table, IdempotencyKey key) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("SELECT " + COLUMNS + " FROM " + table + " WHERE scope = ? AND key_id = ?")) {
            s.setString(1, key.scope());
            s.setString(2, key.id());
            try (ResultSet rs = s.executeQuery()) {
                return rs.next() ? readRecord(rs, 1) : null;
            }
        }
    }

    /**
     * @param table the table
     * @return the statement with which the read-first claim inserts an in-progress record, binding
     *     scope, key id, fingerprint, status, created and expires from index 1: its update count is 1
     *     if it inserted, and the key has a record if it counts otherwise or fails with a duplicate
     *     key (met under a savepoint where {@link #failedStatementAbortsTransaction()}). The base: a
     *     plain {@code INSERT}
     */
    protected String claimInsert(TableName table) {
        return multiRowClaimInsert(table, 1);
    }

    /**
     * Inserts an in-progress record with {@link #claimInsert}, waiting up to the lock timeout for a
     * concurrent holder.
     *
     * @return {@code true} if inserted, {@code false} if the key exists (a concurrent claim committed)
     * @throws SQLException if the insert fails otherwise, including a lock timeout
     */
    final boolean insertClaim(Connection c, TableName table, ClaimRequest r) throws SQLException {
        try {
            return Savepoints.undoingFailure(c, failedStatementAbortsTransaction(), () -> {
                try (PreparedStatement s = c.prepareStatement(claimInsert(table))) {
                    bindClaim(s, r);
                    return withLockTimeout(s, r.lockTimeout(), s::executeUpdate) == 1;
                }
            });
        } catch (SQLException e) {
            if (isDuplicateKey(e)) {
                return false;
            }
            throw e;
        }
    }

    /**
     * Takes over an expired record, waiting up to the lock timeout for a concurrent holder.
     *
     * @return {@code true} if taken over, {@code false} if it is no longer expired
     * @throws SQLException if the update fails, including a lock timeout
     */
    final boolean takeOver(Connection c, TableName table, ClaimRequest r) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("UPDATE " + table + " SET fingerprint = ?, status = ?,"
                + " result_codec = NULL, result = NULL, created_at = ?, completed_at = NULL, expires_at = ?"
                + " WHERE scope = ? AND key_id = ? AND expires_at <= ?")) {
            bindTakeOver(s, 1, r);
            return withLockTimeout(s, r.lockTimeout(), s::executeUpdate) == 1;
        }
    }

    /**
     * Binds a take-over's seven parameters from {@code first} on: the new fingerprint, status, claim
     * time and expiry, then the key and the instant at or before which its record has expired.
     */
    static void bindTakeOver(PreparedStatement s, int first, ClaimRequest r) throws SQLException {
        s.setString(first, r.fingerprint().value());
        s.setString(first + 1, RecordStatus.IN_PROGRESS.name());
        s.setLong(first + 2, r.now().toEpochMilli());
        s.setLong(first + 3, r.expiresAt().toEpochMilli());
        s.setString(first + 4, r.key().scope());
        s.setString(first + 5, r.key().id());
        s.setLong(first + 6, r.now().toEpochMilli());
    }

    /**
     * Binds scope, key id, fingerprint, status, created and expires, in that order, from index 1.
     *
     * @param s the statement
     * @param r the attempt
     * @throws SQLException if binding fails
     */
    static void bindClaim(PreparedStatement s, ClaimRequest r) throws SQLException {
        bindClaims(s, List.of(r));
    }

    /**
     * Binds the rows of a multi-row claim {@code INSERT} ({@link #multiRowClaimInsert}), each as
     * {@link #bindClaim} binds one, from index 1.
     *
     * @param s the statement
     * @param requests the rows, in order
     * @throws SQLException if binding fails
     */
    static void bindClaims(PreparedStatement s, List<ClaimRequest> requests) throws SQLException {
        int p = 0;
        for (ClaimRequest r : requests) {
            s.setString(++p, r.key().scope());
            s.setString(++p, r.key().id());
            s.setString(++p, r.fingerprint().value());
            s.setString(++p, RecordStatus.IN_PROGRESS.name());
            s.setLong(++p, r.now().toEpochMilli());
            s.setLong(++p, r.expiresAt().toEpochMilli());
        }
    }

    /**
     * Binds the claims of {@code requests} as six arrays, one element per request, from index 1:
     * scopes, key ids, fingerprints, statuses (varchar), created and expires (int8), in that order.
     *
     * @param c the connection, which makes the arrays
     * @param s the statement
     * @param requests the rows, in order
     * @throws SQLException if binding fails
     */
    static void bindClaimArrays(Connection c, PreparedStatement s, List<ClaimRequest> requests) throws SQLException {
        s.setArray(1, array(c, "varchar", requests, r -> r.key().scope()));
        s.setArray(2, array(c, "varchar", requests, r -> r.key().id()));
        s.setArray(3, array(c, "varchar", requests, r -> r.fingerprint().value()));
        s.setArray(4, array(c, "varchar", requests, r -> RecordStatus.IN_PROGRESS.name()));
        s.setArray(5, array(c, "int8", requests, r -> r.now().toEpochMilli()));
        s.setArray(6, array(c, "int8", requests, r -> r.expiresAt().toEpochMilli()));
    }

    /** @return an array parameter of SQL type {@code type}, one element per row by {@code element} */
    private static <R> java.sql.Array array(Connection c, String type, List<R> rows, Function<? super R, ?> element)
            throws SQLException {
        Object[] elements = type.equals("int8") ? new Long[rows.size()] : new String[rows.size()];
        for (int i = 0; i < elements.length; i++) {
            elements[i] = element.apply(rows.get(i));
        }
        return c.createArrayOf(type, elements);
    }

    /**
     * @param table the table
     * @param rows how many keys to claim
     * @return {@code INSERT INTO table (...) VALUES (...), (...)} with {@code rows} rows of the columns
     *     {@link #bindClaims} binds
     */
    static String multiRowClaimInsert(TableName table, int rows) {
        return "INSERT INTO " + table + " (scope, key_id, fingerprint, status, created_at, expires_at) VALUES "
                + String.join(", ", Collections.nCopies(rows, "(?, ?, ?, ?, ?, ?)"));
    }

    /**
     * A statement execution that may wait for a lock.
     *
     * @param <T> its result
     */
    @FunctionalInterface
    interface Execution<T> {
        /**
         * @return the result
         * @throws SQLException if it fails
         */
        T run() throws SQLException;
    }

    /**
     * @return how this database's statements bound a wait for another transaction's lock by the
     *     policy's lock timeout. The base: {@link LockWait#QUERY_TIMEOUT}
     */
    protected LockWait lockWait() {
        return LockWait.QUERY_TIMEOUT;
    }

    /**
     * @return a statement that reads nothing and writes nothing, on which {@link LockWait#CANCEL}
     *     spends a cancel that arrived after its statement ended. The base: {@code VALUES 0}
     */
    protected String noOpStatement() {
        return "VALUES 0";
    }

    /**
     * Runs a statement that may wait for another transaction's lock, bounded by the lock timeout as
     * {@link #lockWait()} says ({@link LockWaits}).
     *
     * @param s the statement
     * @param timeout the lock timeout
     * @param execution runs it
     * @param <T> the result
     * @return what the execution returned
     * @throws SQLException if it fails, a lock timeout included
     */
    final <T> T withLockTimeout(PreparedStatement s, Duration timeout, Execution<T> execution) throws SQLException {
        return LockWaits.run(this, s, timeout, execution);
    }

    /**
     * Runs an update that writes the key's record or finds it held, waiting for a concurrent holder
     * up to the lock timeout.
     *
     * @param s the statement, bound
     * @param lockTimeout the lock timeout
     * @param acquiredRows the update count that means "written"
     * @return {@link Claim#acquired()} if it wrote, {@link Claim#busy()} if the wait ran out, or
     *     {@code null} if the key has a record
     * @throws SQLException if the update fails otherwise
     */
    final @Nullable Claim writeOrNull(PreparedStatement s, Duration lockTimeout, int acquiredRows) throws SQLException {
        return ClaimRounds.busyOnLockTimeout(this, Claim.busy(), () ->
                withLockTimeout(s, lockTimeout, s::executeUpdate) == acquiredRows ? Claim.acquired() : null);
    }

    // ---- completion, release, purge --------------------------------------------------------------

    /**
     * Records the outcome in the claimed record.
     *
     * @param c the connection
     * @param table the table
     * @param done what to record
     * @return the number of rows updated: 1, or 0 if the claimed record is gone
     * @throws SQLException if the update fails
     */
    public final int complete(Connection c, TableName table, Completion done) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(completionUpdate(table))) {
            bindCompletion(s, done);
            return s.executeUpdate();
        }
    }

    /** @return the completing {@code UPDATE}, whose parameters {@link #bindCompletion} binds */
    private static String completionUpdate(TableName table) {
        return "UPDATE " + table + " SET status = ?, result_codec = ?, result = ?, completed_at = ?, expires_at = ?"
                + " WHERE scope = ? AND key_id = ?";
    }

    /**
     * Binds status, codec, result, completed and expires, then scope and key id, in that order, from
     * index 1: the parameters of the completing {@code UPDATE}.
     *
     * @param s the statement
     * @param done what to record
     * @throws SQLException if binding fails
     */
    final void bindCompletion(PreparedStatement s, Completion done) throws SQLException {
        s.setString(1, done.status().name());
        s.setString(2, done.codec());
        bindResult(s, 3, done.result());
        s.setLong(4, done.completedAt().toEpochMilli());
        s.setLong(5, done.expiresAt().toEpochMilli());
        s.setString(6, done.key().scope());
        s.setString(7, done.key().id());
    }

    /**
     * @return whether {@link #completeAndCommit} sends the completion and the {@code COMMIT} in one
     *     round trip; if so, a transaction that {@code JdbcTransactions} runs records its result that
     *     way. The base: no
     */
    public boolean completesWithCommit() {
        return false;
    }

    /**
     * Records the outcome in the claimed record and commits the transaction: with the dialect's
     * {@link #completionWithCommit} in one round trip, if it gives one; else with {@link #complete}
     * and then {@link Connection#commit()}, committing nothing if the record is not found.
     *
     * @param c the connection, in a transaction that the library runs
     * @param table the table
     * @param done what to record
     * @throws SQLException if the update or the commit fails; {@link #isRecordMissing} tells a record not found
     */
    public final void completeAndCommit(Connection c, TableName table, Completion done) throws SQLException {
        CommitRoundTrips.complete(this, c, table, done);
    }

    /**
     * @param table the table
     * @return a statement that records a completion and then commits, in one round trip, binding what
     *     the completing {@code UPDATE} binds (status, codec, result, completed, expires, then scope
     *     and key id, from index 1); if the record is not found it must fail, with a failure that
     *     {@link #isRecordMissing} recognises, before its {@code COMMIT} runs. Or {@code null}: the
     *     update, then {@link Connection#commit()}. The base: {@code null}
     */
    protected @Nullable String completionWithCommit(TableName table) {
        return null;
    }

    /** SQLState of {@link #completeAndCommit}'s failure when the claimed record is not found (no data). */
    static final String RECORD_MISSING = "02000";

    /**
     * @param e a failure of {@link #completeAndCommit}
     * @return whether it reports that the claimed record was not found
     */
    public boolean isRecordMissing(SQLException e) {
        return RECORD_MISSING.equals(e.getSQLState());
    }

    // ---- write-last mode -----------------------------------------------------------------------------

    /**
     * Writes the key's record, complete with {@code done}, after the work has run in the
     * transaction ({@code IdempotencyStore.writeLast}): an unexpired record refuses the write, an
     * expired one is replaced. The base claims the key with {@link #claim} (so each dialect's tested
     * claim decides who wins a race, and waits as it does) and, if acquired, records {@code done} with
     * {@link #complete}: two statements on a first execution. A dialect that inserts the completed
     * record first (H2, MariaDB) costs one statement there: its insert waits for a concurrent writer
     * of the key that is still open, up to the lock timeout, and only if the key has a record (a row
     * count, or a duplicate-key failure of that statement alone) does the claim run as above, which
     * finds the record or takes an expired one over.
     *
     * @param c the connection, in a transaction whose work has run
     * @param table the table
     * @param r the key, fingerprint, time and lock timeout
     * @param done the outcome to record
     * @return {@link Claim.Acquired} if written; {@link Claim.Existing} or {@link Claim.Busy} if not
     *     (the caller rolls the transaction back)
     * @throws SQLException if a statement fails for another reason than a duplicate or a lock
     *     timeout; {@link #isRecordMissing} tells a record that vanished between the claim and its completion
     */
    public final Claim writeLast(Connection c, TableName table, ClaimRequest r, Completion done) throws SQLException {
        String insertFirst = completedRecordInsertFirst(table);
        if (insertFirst != null) {
            Claim written = insertCompletedRecord(c, insertFirst, r, done);
            if (written != null) {
                return written;
            }
        }
        Claim claim = claim(c, table, r);
        if (claim instanceof Claim.Acquired && complete(c, table, done) != 1) {
            throw new SQLException("the record claimed for the write-last completion was not found", RECORD_MISSING);
        }
        return claim;
    }

    /**
     * @param table the table
     * @return the statement with which {@link #writeLast} inserts the completed record first (the
     *     columns {@link #bindCompletedRecord} binds; its update count is 1 if it inserted, and the
     *     key has a record if it counts otherwise or fails with a duplicate key), or {@code null} if
     *     it claims first. The base: {@code null}
     */
    @Nullable String completedRecordInsertFirst(TableName table) {
        return null;
    }

    /**
     * @return {@link Claim#acquired()} if inserted, {@link Claim#busy()} if the lock wait ran out,
     *     {@code null} if the key has a record
     */
    private @Nullable Claim insertCompletedRecord(Connection c, String sql, ClaimRequest r, Completion done) throws SQLException {
        try {
            return Savepoints.undoingFailure(c, failedStatementAbortsTransaction(), () -> {
                try (PreparedStatement s = c.prepareStatement(sql)) {
                    bindCompletedRecord(s, r, done);
                    return writeOrNull(s, r.lockTimeout(), 1);
                }
            });
        } catch (SQLException e) {
            if (isDuplicateKey(e)) {
                return null;
            }
            throw e;
        }
    }

    /**
     * @param table the table
     * @return {@code INSERT INTO table (...) VALUES (...)} of a completed record, the columns that
     *     {@link #bindCompletedRecord} binds
     */
    static String completedRecordInsert(TableName table) {
        return "INSERT INTO " + table + " (scope, key_id, fingerprint, status, result_codec, result, created_at, completed_at,"
                + " expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
    }

    /**
     * Binds a completed record for {@link #completedRecordInsert}, from index 1: scope, key id,
     * fingerprint, status, codec, result, created (the request's now), completed and expires.
     *
     * @param s the statement
     * @param r the key, fingerprint and time
     * @param done the outcome
     * @throws SQLException if binding fails
     */
    final void bindCompletedRecord(PreparedStatement s, ClaimRequest r, Completion done) throws SQLException {
        s.setString(1, r.key().scope());
        s.setString(2, r.key().id());
        s.setString(3, r.fingerprint().value());
        s.setString(4, done.status().name());
        s.setString(5, done.codec());
        bindResult(s, 6, done.result());
        s.setLong(7, r.now().toEpochMilli());
        s.setLong(8, done.completedAt().toEpochMilli());
        s.setLong(9, done.expiresAt().toEpochMilli());
    }

    /**
     * @return whether {@link #writeLastAndCommit} sends the write and the {@code COMMIT} in one round
     *     trip; if so, a write-last transaction that {@code JdbcTransactions} runs is committed that
     *     way. The base: no
     */
    public boolean writesLastWithCommit() {
        return false;
    }

    /**
     * Writes the key's record as {@link #writeLast} does and commits, if the write succeeds: with the
     * dialect's {@link #lastWriteWithCommit} in one round trip, if it gives one (a refusal or a lock
     * wait that runs out then rolls the transaction back, and the record is read in a fresh
     * snapshot); else with {@link #writeLast} and then {@link Connection#commit()}.
     *
     * @param c the connection, in a transaction that the library runs, whose work has run
     * @param table the table
     * @param r the key, fingerprint, time and lock timeout
     * @param done the outcome to record
     * @return {@link Claim.Acquired} if written and committed; {@link Claim.Existing} with the record
     *     found, or {@link Claim.Busy}, if refused: nothing was committed, and the caller rolls back
     * @throws SQLException if a statement or the commit fails otherwise
     */
    public final Claim writeLastAndCommit(Connection c, TableName table, ClaimRequest r, Completion done) throws SQLException {
        return CommitRoundTrips.writeLast(this, c, table, r, done);
    }

    /**
     * @param table the table
     * @param lockTimeout the policy's lock timeout, which the statement must bound its own lock waits by
     * @return a statement that writes the completed record (replacing an expired one) and then
     *     commits, in one round trip, binding the completed record as {@link #completedRecordInsert}
     *     does (from index 1) and the current time in epoch milliseconds (index 10); if the key has an
     *     unexpired record it must fail, with a failure that {@link #isRecordMissing} recognises,
     *     before its {@code COMMIT} runs, and a lock wait that runs out must fail as
     *     {@link #isLockTimeout} recognises. Or {@code null}: {@link #writeLast}, then
     *     {@link Connection#commit()}. The base: {@code null}
     */
    protected @Nullable String lastWriteWithCommit(TableName table, Duration lockTimeout) {
        return null;
    }

    /**
     * Reads the key's record as the connection's transaction sees it.
     *
     * @param c the connection
     * @param table the table
     * @param key the key
     * @return the record, if there is one
     * @throws SQLException if the query fails
     */
    public final Optional<StoredRecord> find(Connection c, TableName table, IdempotencyKey key) throws SQLException {
        return Optional.ofNullable(select(c, table, key));
    }

    /**
     * How large the statement that records {@code done} would be, against the largest statement the
     * connection's server accepts: checked before anything is sent, because a statement over that
     * limit would fail and, on some databases, drop the connection. The base knows no such limit.
     *
     * @param c the connection that will record the result
     * @param done what it will record
     * @return the sizes, if the statement would be over the limit; empty if it fits or no limit is known
     * @throws SQLException if the limit cannot be read
     */
    public final Optional<PacketOverflow> packetOverflow(Connection c, Completion done) throws SQLException {
        return packetOverflow(c, done.key(), done.codec(), done.result());
    }

    /**
     * The same check for the statement that records lease mode's result ({@link #completeLeased}).
     *
     * @param c the connection that will record the result
     * @param done what it will record
     * @return the sizes, if the statement would be over the limit; empty if it fits or no limit is known
     * @throws SQLException if the limit cannot be read
     */
    public final Optional<PacketOverflow> packetOverflow(Connection c, LeasedCompletion done) throws SQLException {
        return packetOverflow(c, done.key(), done.codec(), done.result());
    }

    /**
     * The same check for the statement that records lease mode's recovery point ({@link #checkpoint}).
     *
     * @param c the connection that will record it
     * @param key the key
     * @param point the recovery point
     * @return the sizes, if the statement would be over the limit; empty if it fits or no limit is known
     * @throws SQLException if the limit cannot be read
     */
    public final Optional<PacketOverflow> packetOverflow(Connection c, IdempotencyKey key, RecoveryPoint point) throws SQLException {
        return packetOverflow(c, key, point.codec(), point.state());
    }

    /**
     * The rule of {@link #packetOverflow(Connection, Completion)}, for a statement that records
     * {@code result} under {@code key} with {@code codec}: override it for a database with a limit.
     *
     * @param c the connection that will record the result
     * @param key the key
     * @param codec the codec's name
     * @param result the encoded result, or {@code null}
     * @return the sizes, if the statement would be over the limit; empty if it fits or no limit is known
     * @throws SQLException if the limit cannot be read
     */
    protected Optional<PacketOverflow> packetOverflow(Connection c, IdempotencyKey key, String codec, byte @Nullable [] result)
            throws SQLException {
        return Optional.empty();
    }

    /**
     * A statement too large for the server.
     *
     * @param statementBytes the statement's size as sent, at most (an upper bound)
     * @param limitBytes the largest statement the server accepts
     * @param setting the server setting that sets the limit, such as {@code max_allowed_packet}
     */
    public record PacketOverflow(long statementBytes, long limitBytes, String setting) {
    }

    /**
     * Binds an encoded result, or SQL NULL.
     *
     * @param s the statement
     * @param index the parameter index
     * @param result the bytes, or {@code null}
     * @throws SQLException if binding fails
     */
    protected void bindResult(PreparedStatement s, int index, byte @Nullable [] result) throws SQLException {
        if (result == null) {
            s.setNull(index, Types.VARBINARY);
        } else {
            s.setBytes(index, result);
        }
    }

    /**
     * Deletes this transaction's in-progress claim.
     *
     * @param c the connection
     * @param table the table
     * @param key the key
     * @throws SQLException if the delete fails
     */
    public final void release(Connection c, TableName table, IdempotencyKey key) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("DELETE FROM " + table + " WHERE scope = ? AND key_id = ? AND status = ?")) {
            s.setString(1, key.scope());
            s.setString(2, key.id());
            s.setString(3, RecordStatus.IN_PROGRESS.name());
            s.executeUpdate();
        }
    }

    /**
     * Deletes at most {@code limit} expired records, with the dialect's {@link #purgeStatement}.
     *
     * @param c the connection
     * @param table the table
     * @param now the current time
     * @param limit the batch size
     * @return the number deleted
     * @throws SQLException if the delete fails
     */
    public final int purgeExpired(Connection c, TableName table, Instant now, int limit) throws SQLException {
        return purge(c, purgeStatement(table, limit, ""), now);
    }

    /**
     * Deletes at most {@code limit} expired abandoned claims (records in progress without a lease:
     * claims committed without their result), with the dialect's {@link #purgeStatement}; the count
     * it returns is how many there were, with no read of its own.
     *
     * @param c the connection
     * @param table the table
     * @param now the current time
     * @param limit the batch size
     * @return the number deleted
     * @throws SQLException if the delete fails
     */
    public final int purgeExpiredAbandonedClaims(Connection c, TableName table, Instant now, int limit) throws SQLException {
        return purge(c, purgeStatement(table, limit, ABANDONED_CLAIM), now);
    }

    /** The records {@link #purgeExpiredAbandonedClaims} deletes, as a condition to add to the batch's selection. */
    private static final String ABANDONED_CLAIM = " AND status = '" + RecordStatus.IN_PROGRESS.name() + "' AND lease_until IS NULL";

    private static int purge(Connection c, String sql, Instant now) throws SQLException {
        int parameters = (int) sql.chars().filter(ch -> ch == '?').count();
        try (PreparedStatement s = c.prepareStatement(sql)) {
            for (int p = 1; p <= parameters; p++) {
                s.setLong(p, now.toEpochMilli());
            }
            return s.executeUpdate();
        }
    }

    /**
     * The statement that deletes at most {@code limit} expired records that also meet {@code only};
     * each of its parameters is bound to the current time in epoch milliseconds. The base statement
     * selects the batch with a standard {@code FETCH FIRST} subquery on the expiry index, and checks
     * the expiry again on the deleted row itself: a record that a concurrent transaction took over
     * while the delete waited for its lock is no longer expired, and must survive.
     *
     * @param table the table
     * @param limit the batch size
     * @param only a condition on the record's columns to add to the batch's selection, with its
     *     leading {@code " AND "}, or the empty string; it has no parameters
     * @return the {@code DELETE} statement, its only parameters the current time
     */
    protected String purgeStatement(TableName table, int limit, String only) {
        return "DELETE FROM " + table + " WHERE (scope, key_id) IN (SELECT scope, key_id FROM "
                + table + " WHERE expires_at <= ?" + only + " ORDER BY expires_at FETCH FIRST " + limit + " ROWS ONLY) AND expires_at <= ?";
    }

    // ---- chunks of a batch job ---------------------------------------------------------------------

    /** The most keys one chunk statement binds; a larger chunk is claimed in slices of this size. */
    static final int KEYS_PER_STATEMENT = 500;

    /**
     * @return whether {@link #claimAll} inserts the absent keys of a chunk in one multi-row
     *     {@code INSERT}; if not, it claims them one by one with {@link #claim}
     */
    protected boolean multiRowClaims() {
        return true;
    }

    /** @return how {@link #claimAll} claims a slice of a chunk: the base reads first, unless {@link #multiRowClaims()} says no */
    ChunkClaims.Strategy chunkClaims() {
        return multiRowClaims() ? ChunkClaims.Strategy.READ_FIRST : ChunkClaims.Strategy.KEY_BY_KEY;
    }

    /**
     * Claims one key of a chunk on its own. The base: as {@link #claim}.
     *
     * @param c the caller's connection, in a transaction
     * @param table the table
     * @param r the attempt
     * @return the claim
     * @throws SQLException if the claim fails
     */
    Claim claimInChunk(Connection c, TableName table, ClaimRequest r) throws SQLException {
        return claim(c, table, r);
    }

    /**
     * @param table the table
     * @return for {@link ChunkClaims.Strategy#INSERT_FIRST}: a claim {@code INSERT} of any number of
     *     keys from the six array parameters that {@link #bindClaimArrays} binds, which skips the keys
     *     that have a record and returns the scope and key id of each row it inserted
     */
    String claimInsertReturningKeys(TableName table) {
        throw new UnsupportedOperationException(name() + " does not claim a chunk by inserting first");
    }

    /**
     * Claims the keys of a chunk, sorted as given. Per slice of at most 500 keys: one
     * {@code SELECT} finds the existing records; one multi-row {@code INSERT} claims the absent keys
     * (under a savepoint where a failed statement aborts the transaction). Only if that insert meets
     * a concurrent claim (a duplicate, or a lock wait that runs out) are the absent keys claimed one
     * by one with {@link #claim}, which waits for each holder as a single claim does; an expired
     * record is taken over one by one too. Where {@link #multiRowClaims()} says no, every key is
     * claimed on its own.
     *
     * @param c the caller's connection, in a transaction
     * @param table the table
     * @param requests the requests, sorted by key, no key twice
     * @return one claim per request, in order
     * @throws SQLException if a statement fails for another reason than a duplicate or a lock timeout
     */
    public final List<Claim> claimAll(Connection c, TableName table, List<ClaimRequest> requests) throws SQLException {
        return ChunkClaims.claimAll(this, c, table, requests);
    }

    /**
     * Reads the records of a slice of keys (sorted, no key twice) in one {@code SELECT}.
     *
     * @param c the connection
     * @param table the table
     * @param slice the requests whose records to read
     * @return the records found, by key
     * @throws SQLException if the query fails
     */
    final Map<IdempotencyKey, StoredRecord> selectAll(Connection c, TableName table, List<ClaimRequest> slice) throws SQLException {
        // Keys grouped by scope (the slice is sorted): "scope = ? AND key_id IN (...)" lets every database
        // look the keys up in the primary key, where "(scope = ? AND key_id = ?) OR ..." makes some scan
        // every record of the scope.
        Map<String, List<String>> idsByScope = new java.util.LinkedHashMap<>();
        for (ClaimRequest r : slice) {
            idsByScope.computeIfAbsent(r.key().scope(), scope -> new ArrayList<>()).add(r.key().id());
        }
        StringBuilder sql = new StringBuilder("SELECT " + COLUMNS + " FROM " + table + " WHERE ");
        boolean firstScope = true;
        for (List<String> ids : idsByScope.values()) {
            sql.append(firstScope ? "" : " OR ").append("(scope = ? AND key_id IN (");
            for (int i = 0; i < ids.size(); i++) {
                sql.append(i == 0 ? "?" : ", ?");
            }
            sql.append("))");
            firstScope = false;
        }
        Map<IdempotencyKey, StoredRecord> found = new HashMap<>();
        try (PreparedStatement s = c.prepareStatement(sql.toString())) {
            int p = 1;
            for (Map.Entry<String, List<String>> scope : idsByScope.entrySet()) {
                s.setString(p++, scope.getKey());
                for (String id : scope.getValue()) {
                    s.setString(p++, id);
                }
            }
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    StoredRecord record = readRecord(rs, 1);
                    found.put(record.key(), record);
                }
            }
        }
        return found;
    }

    /**
     * Records the outcomes of a chunk: in one JDBC batch of the completing {@code UPDATE}, or, where
     * the dialect has a statement that records many (PostgreSQL, MariaDB), with one such statement
     * per 500 completions and 4 MiB of results.
     *
     * @param c the connection
     * @param table the table
     * @param completions what to record
     * @return the number of completions whose claimed record was not found (0 if all were written)
     * @throws SQLException if the batch fails
     */
    public final int completeAll(Connection c, TableName table, List<Completion> completions) throws SQLException {
        if (completions.isEmpty()) {
            return 0;
        }
        String arrays = completionArrays(table);
        if (arrays != null) {
            return completeInArrays(c, completions, arrays);
        }
        IntFunction<String> rowSets = completionRowSets(table);
        if (rowSets != null) {
            return completeInRowSets(c, completions, rowSets);
        }
        try (PreparedStatement s = c.prepareStatement(completionUpdate(table))) {
            for (Completion done : completions) {
                bindCompletion(s, done);
                s.addBatch();
            }
            int missing = 0;
            for (int count : s.executeBatch()) {
                if (count == 0) {
                    missing++;
                }
            }
            return missing;
        }
    }

    /**
     * @param table the table
     * @return the statement that records a set of n completions at once, binding what
     *     {@link #completeInRowSets} binds, or {@code null} to record a chunk in a JDBC batch of the
     *     completing {@code UPDATE}. The base: {@code null}
     */
    @Nullable IntFunction<String> completionRowSets(TableName table) {
        return null;
    }

    /**
     * @param table the table
     * @return the statement that records any number of completions at once from seven array
     *     parameters (scope, key id, status, codec, result, completed and expires, one element per
     *     completion), whose update count is the number of records written; or {@code null} to
     *     record a chunk as {@link #completionRowSets} says. One statement text for every chunk size,
     *     with seven parameters, costs the server far less to parse and plan than a row set of seven
     *     parameters per key. The base: {@code null}
     */
    @Nullable String completionArrays(TableName table) {
        return null;
    }

    /** Records a chunk's outcomes with the one statement of {@link #completionArrays}. */
    private static int completeInArrays(Connection c, List<Completion> completions, String sql) throws SQLException {
        byte[][] results = new byte[completions.size()][];
        for (int i = 0; i < results.length; i++) {
            results[i] = completions.get(i).result();
        }
        try (PreparedStatement s = c.prepareStatement(sql)) {
            s.setArray(1, array(c, "varchar", completions, done -> done.key().scope()));
            s.setArray(2, array(c, "varchar", completions, done -> done.key().id()));
            s.setArray(3, array(c, "varchar", completions, done -> done.status().name()));
            s.setArray(4, array(c, "varchar", completions, Completion::codec));
            s.setArray(5, c.createArrayOf("bytea", results));
            s.setArray(6, array(c, "int8", completions, done -> done.completedAt().toEpochMilli()));
            s.setArray(7, array(c, "int8", completions, done -> done.expiresAt().toEpochMilli()));
            return completions.size() - s.executeUpdate();
        }
    }

    /** Results per completing statement of a chunk, at most: well under MariaDB's default {@code max_allowed_packet}. */
    private static final long COMPLETION_STATEMENT_BYTES = 4L * 1024 * 1024;

    /**
     * Records a chunk's outcomes with one statement per set of at most {@value #KEYS_PER_STATEMENT}
     * completions and 4 MiB of results (so that a statement stays well under a server's packet
     * limit). Each statement binds, per completion, scope, key id, status, codec, result, completed
     * and expires, in that order, from index 1; its update count is the number of records written.
     *
     * @param c the connection
     * @param completions what to record
     * @param sqlForRows the statement for a set of n completions
     * @return the number of completions whose claimed record was not found
     * @throws SQLException if a statement fails
     */
    final int completeInRowSets(Connection c, List<Completion> completions, IntFunction<String> sqlForRows)
            throws SQLException {
        int missing = 0;
        int from = 0;
        while (from < completions.size()) {
            int to = from;
            long bytes = 0;
            while (to < completions.size() && to - from < KEYS_PER_STATEMENT
                    && (to == from || bytes + resultBytes(completions.get(to)) <= COMPLETION_STATEMENT_BYTES)) {
                bytes += resultBytes(completions.get(to));
                to++;
            }
            List<Completion> set = completions.subList(from, to);
            from = to;
            try (PreparedStatement s = c.prepareStatement(sqlForRows.apply(set.size()))) {
                int p = 0;
                for (Completion done : set) {
                    s.setString(++p, done.key().scope());
                    s.setString(++p, done.key().id());
                    s.setString(++p, done.status().name());
                    s.setString(++p, done.codec());
                    bindResult(s, ++p, done.result());
                    s.setLong(++p, done.completedAt().toEpochMilli());
                    s.setLong(++p, done.expiresAt().toEpochMilli());
                }
                missing += set.size() - s.executeUpdate();
            }
        }
        return missing;
    }

    private static long resultBytes(Completion done) {
        return done.result() == null ? 0 : done.result().length;
    }

    // ---- lease mode ------------------------------------------------------------------------------

    /**
     * @return a query of one row and one {@code BIGINT} column: the database server's current time
     *     in epoch milliseconds. Lease mode judges every lease by this one clock, never by the
     *     application node's. The base reads {@code CURRENT_TIMESTAMP} instead (see
     *     {@link #databaseNow}); dialects override this with their own expression.
     */
    protected @Nullable String currentTimeMillisQuery() {
        return null;
    }

    /**
     * @param c the connection
     * @return the database server's current time, to the millisecond
     * @throws SQLException if the query fails
     */
    public final Instant databaseNow(Connection c) throws SQLException {
        String query = currentTimeMillisQuery();
        try (PreparedStatement s = c.prepareStatement(query != null ? query : "SELECT CURRENT_TIMESTAMP");
             ResultSet rs = s.executeQuery()) {
            rs.next();
            return query != null ? Instant.ofEpochMilli(rs.getLong(1))
                    : rs.getObject(1, java.time.OffsetDateTime.class).toInstant().truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
        }
    }

    /**
     * Claims the key under a lease, or finds its record, by the database's clock. A key with no
     * record, or an expired one, is claimed as by {@link #claim} (so each dialect's tested claim
     * decides who wins a race), and the lease is then written on the claimed row. A record in
     * progress whose lease ended (or was released) and whose fingerprint matches is taken over by
     * a compare-and-set on its owner token, counting one more attempt and keeping its recovery point.
     *
     * @param c the engine's connection, in a transaction
     * @param table the table
     * @param r the attempt
     * @return the claim
     * @throws SQLException if a statement fails for another reason than a lock timeout
     */
    public final LeaseClaim claimLease(Connection c, TableName table, LeaseRequest r) throws SQLException {
        return Leases.claim(this, c, table, r);
    }

    /**
     * @return whether {@link #claim} writes to an existing record it only found (MariaDB counts a
     *     duplicate in {@code attempts}); lease claims then undo that write to a savepoint, since
     *     lease mode counts attempts itself
     */
    protected boolean claimCountsDuplicates() {
        return false;
    }

    /**
     * Moves the lease's end to the database's now plus {@code lease}, if the token still holds the key.
     *
     * @param c the connection
     * @param table the table
     * @param key the key
     * @param ownerToken the holder's token
     * @param lease the new lease
     * @return the new end, or empty
     * @throws SQLException if a statement fails
     */
    public final Optional<Instant> extendLease(Connection c, TableName table, IdempotencyKey key, String ownerToken, Duration lease)
            throws SQLException {
        return Leases.extend(this, c, table, key, ownerToken, lease);
    }

    /**
     * Records a recovery point, if the token still holds the key. While the record is in progress,
     * its {@code result_codec} and {@code result} columns hold the point's codec and value, and
     * {@code phase} says which phase committed.
     *
     * @param c the connection
     * @param table the table
     * @param key the key
     * @param ownerToken the holder's token
     * @param point the recovery point
     * @return whether it was recorded
     * @throws SQLException if the update fails
     */
    public final boolean checkpoint(Connection c, TableName table, IdempotencyKey key, String ownerToken, RecoveryPoint point)
            throws SQLException {
        return Leases.checkpoint(this, c, table, key, ownerToken, point);
    }

    /**
     * Records the outcome at the database's now, if the token still holds the key.
     *
     * @param c the connection
     * @param table the table
     * @param ownerToken the holder's token
     * @param done what to record
     * @return when it was recorded, or empty
     * @throws SQLException if a statement fails
     */
    public final Optional<Instant> completeLeased(Connection c, TableName table, String ownerToken, LeasedCompletion done) throws SQLException {
        return Leases.complete(this, c, table, ownerToken, done);
    }

    /**
     * Ends the lease now, if the token still holds the key; the record stays in progress with its
     * owner token (until another attempt takes it over), attempts and recovery point.
     *
     * @param c the connection
     * @param table the table
     * @param key the key
     * @param ownerToken the holder's token
     * @return whether the lease was ended
     * @throws SQLException if the update fails
     */
    public final boolean releaseLease(Connection c, TableName table, IdempotencyKey key, String ownerToken) throws SQLException {
        return Leases.release(c, table, key, ownerToken);
    }

    /**
     * Enlists a named operation in progress ({@link dev.idempotency.spi.RecoveringStore#enlist}) in
     * {@link TableName#pending()}, if the token still holds the key.
     *
     * @param c the connection
     * @param table the table
     * @param key the key
     * @param ownerToken the holder's token
     * @param operation the operation's name
     * @return whether it was enlisted
     * @throws SQLException if a statement fails
     */
    public final boolean enlist(Connection c, TableName table, IdempotencyKey key, String ownerToken, String operation)
            throws SQLException {
        return PendingOperations.enlist(c, table, key, ownerToken, operation);
    }

    /**
     * Removes the key's entry from {@link TableName#pending()}, if any.
     *
     * @param c the connection
     * @param table the table
     * @param key the key
     * @throws SQLException if the statement fails
     */
    public final void delist(Connection c, TableName table, IdempotencyKey key) throws SQLException {
        PendingOperations.delist(c, table, key);
    }

    /**
     * A page of {@link TableName#pending()} in key order, each entry with its record's state.
     *
     * @param c the connection
     * @param table the table
     * @param after the last key of the previous page, or {@code null}
     * @param limit the most entries
     * @return the entries
     * @throws SQLException if a statement fails
     */
    public final List<PendingOperation> pending(Connection c, TableName table, @Nullable IdempotencyKey after, int limit)
            throws SQLException {
        return PendingOperations.page(c, table, after, limit, databaseNow(c));
    }

    private static @Nullable Instant leaseUntil(ResultSet rs, int column) throws SQLException {
        long millis = rs.getLong(column);
        return rs.wasNull() ? null : Instant.ofEpochMilli(millis);
    }

    /**
     * Reads a record from the current row, starting at column {@code first} in {@link #COLUMNS} order.
     *
     * @param rs the result set, on a row
     * @param first the index of the {@code scope} column
     * @return the record
     * @throws SQLException if reading fails
     */
    final StoredRecord readRecord(ResultSet rs, int first) throws SQLException {
        IdempotencyKey key = IdempotencyKey.of(rs.getString(first), rs.getString(first + 1));
        long completed = rs.getLong(first + 7);
        Instant completedAt = rs.wasNull() ? null : Instant.ofEpochMilli(completed);
        return new StoredRecord(key, Fingerprint.fromValue(rs.getString(first + 2)), RecordStatus.valueOf(rs.getString(first + 3)),
                rs.getString(first + 4), rs.getBytes(first + 5), Instant.ofEpochMilli(rs.getLong(first + 6)), completedAt,
                Instant.ofEpochMilli(rs.getLong(first + 8)), leaseUntil(rs, first + 9));
    }

    /**
     * @param c the connection
     * @param savepoint a savepoint to release; failures are ignored (some drivers do not support it)
     */
    static void releaseQuietly(Connection c, Savepoint savepoint) {
        try {
            c.releaseSavepoint(savepoint);
        } catch (SQLException | UnsupportedOperationException ignored) {
            // Releasing is an optimisation; the savepoint ends with the transaction anyway.
        }
    }

    private static String readResource(String path) {
        // Through the class, not its loader: on the module path only the module's own classes find
        // its resources without the package being opened.
        try (InputStream in = SqlDialect.class.getResourceAsStream("/" + path)) {
            if (in == null) {
                throw new IllegalStateException("DDL resource missing from the jar: " + path);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read DDL resource " + path, e);
        }
    }

    @Override
    public String toString() {
        return name() + " dialect";
    }
}
