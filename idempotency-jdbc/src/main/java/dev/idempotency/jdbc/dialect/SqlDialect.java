package dev.idempotency.jdbc.dialect;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.jdbc.internal.SqlIdentifier;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.RecordStatus;
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
import java.util.Locale;
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
 * <p>Dialects are stateless and thread-safe.
 */
public abstract class SqlDialect {

    /** The columns every dialect's table has, in the order {@link #readRecord} expects. */
    protected static final String COLUMNS =
            "scope, key_id, fingerprint, status, result_codec, result, created_at, completed_at, expires_at";

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
     * @param table the configured table name (already validated)
     * @return the DDL statements that create the table and its expiry index
     */
    public String ddl(String table) {
        SqlIdentifier.checkTableName(table);
        String simple = SqlIdentifier.simpleName(table);
        // Whole names only: the table, and the names derived from it (index, constraint), which
        // take the unqualified name.
        return DEFAULT_NAMES.matcher(readResource(ddlResource())).replaceAll(m ->
                java.util.regex.Matcher.quoteReplacement(m.group(1) == null ? table : simple + m.group(1)));
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
     * @return whether a failed statement aborts the whole transaction (PostgreSQL); if so, a
     *     duplicate-key insert is run under a savepoint unless the dialect overrides the claim
     */
    protected boolean failedStatementAbortsTransaction() {
        return true;
    }

    // ---- the claim ---------------------------------------------------------------------------

    /**
     * Claims the key, or finds its record: select; if absent, insert; if expired, take over.
     * A duplicate on insert (a concurrent claimer committed) means select again.
     *
     * @param c the caller's connection, in a transaction
     * @param table the table
     * @param request the attempt
     * @return the claim
     * @throws SQLException if a statement fails for another reason than a duplicate or a lock timeout
     */
    public Claim claim(Connection c, String table, ClaimRequest request) throws SQLException {
        for (int round = 0; round < 3; round++) {
            StoredRecord found = select(c, table, request.key());
            if (found != null && found.expiresAt().isAfter(request.now())) {
                return Claim.existing(found);
            }
            try {
                if (found == null ? insertClaim(c, table, request) : takeOver(c, table, request)) {
                    return Claim.acquired();
                }
            } catch (SQLException e) {
                if (isLockTimeout(e)) {
                    return Claim.busy();
                }
                throw e;
            }
        }
        throw new SQLException("the key's record kept changing under concurrent claims; the transaction's snapshot"
                + " cannot see the committed record", "40001");
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
    protected @Nullable StoredRecord select(Connection c, String table, IdempotencyKey key) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("SELECT " + COLUMNS + " FROM " + table + " WHERE scope = ? AND key_id = ?")) {
            s.setString(1, key.scope());
            s.setString(2, key.id());
            try (ResultSet rs = s.executeQuery()) {
                return rs.next() ? readRecord(rs, 1) : null;
            }
        }
    }

    /**
     * Inserts an in-progress record, waiting up to the lock timeout for a concurrent holder.
     *
     * @param c the connection
     * @param table the table
     * @param r the attempt
     * @return {@code true} if inserted, {@code false} if the key exists (a concurrent claim committed)
     * @throws SQLException if the insert fails otherwise, including a lock timeout
     */
    protected boolean insertClaim(Connection c, String table, ClaimRequest r) throws SQLException {
        Savepoint savepoint = failedStatementAbortsTransaction() ? c.setSavepoint() : null;
        try (PreparedStatement s = c.prepareStatement("INSERT INTO " + table
                + " (scope, key_id, fingerprint, status, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)")) {
            bindClaim(s, r);
            withLockTimeout(s, r.lockTimeout(), s::executeUpdate);
            return true;
        } catch (SQLException e) {
            if (savepoint != null) {
                c.rollback(savepoint);
            }
            if (isDuplicateKey(e)) {
                return false;
            }
            throw e;
        } finally {
            if (savepoint != null) {
                releaseQuietly(c, savepoint);
            }
        }
    }

    /**
     * Takes over an expired record, waiting up to the lock timeout for a concurrent holder.
     *
     * @param c the connection
     * @param table the table
     * @param r the attempt
     * @return {@code true} if taken over, {@code false} if it is no longer expired
     * @throws SQLException if the update fails, including a lock timeout
     */
    protected boolean takeOver(Connection c, String table, ClaimRequest r) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("UPDATE " + table + " SET fingerprint = ?, status = ?,"
                + " result_codec = NULL, result = NULL, created_at = ?, completed_at = NULL, expires_at = ?"
                + " WHERE scope = ? AND key_id = ? AND expires_at <= ?")) {
            s.setString(1, r.fingerprint().value());
            s.setString(2, RecordStatus.IN_PROGRESS.name());
            s.setLong(3, r.now().toEpochMilli());
            s.setLong(4, r.expiresAt().toEpochMilli());
            s.setString(5, r.key().scope());
            s.setString(6, r.key().id());
            s.setLong(7, r.now().toEpochMilli());
            return withLockTimeout(s, r.lockTimeout(), s::executeUpdate) == 1;
        }
    }

    /**
     * Binds scope, key id, fingerprint, status, created and expires, in that order, from index 1.
     *
     * @param s the statement
     * @param r the attempt
     * @throws SQLException if binding fails
     */
    protected static void bindClaim(PreparedStatement s, ClaimRequest r) throws SQLException {
        s.setString(1, r.key().scope());
        s.setString(2, r.key().id());
        s.setString(3, r.fingerprint().value());
        s.setString(4, RecordStatus.IN_PROGRESS.name());
        s.setLong(5, r.now().toEpochMilli());
        s.setLong(6, r.expiresAt().toEpochMilli());
    }

    /**
     * A statement execution that may wait for a lock.
     *
     * @param <T> its result
     */
    @FunctionalInterface
    protected interface Execution<T> {
        /**
         * @return the result
         * @throws SQLException if it fails
         */
        T run() throws SQLException;
    }

    /**
     * Runs a statement that may wait for another transaction's lock, bounded by the lock timeout.
     * The base uses the statement's query timeout (whole seconds, rounded up; zero waits one
     * second, as JDBC reads zero as "no limit") and restores the previous one afterwards (on H2
     * the query timeout is a session setting of the caller's).
     *
     * @param s the statement
     * @param timeout the lock timeout
     * @param execution runs it
     * @param <T> the result
     * @return what the execution returned
     * @throws SQLException if it fails, a lock timeout included
     */
    protected <T> T withLockTimeout(PreparedStatement s, Duration timeout, Execution<T> execution) throws SQLException {
        long millis = timeout.toMillis();
        int seconds = (int) Math.max(1, Math.min(Integer.MAX_VALUE, (millis + 999) / 1000));
        int previous = s.getQueryTimeout();
        s.setQueryTimeout(seconds);
        try {
            return execution.run();
        } finally {
            s.setQueryTimeout(previous);
        }
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
    public int complete(Connection c, String table, Completion done) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("UPDATE " + table + " SET status = ?, result_codec = ?, result = ?,"
                + " completed_at = ?, expires_at = ? WHERE scope = ? AND key_id = ?")) {
            s.setString(1, done.status().name());
            s.setString(2, done.codec());
            bindResult(s, 3, done.result());
            s.setLong(4, done.completedAt().toEpochMilli());
            s.setLong(5, done.expiresAt().toEpochMilli());
            s.setString(6, done.key().scope());
            s.setString(7, done.key().id());
            return s.executeUpdate();
        }
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
    public void release(Connection c, String table, IdempotencyKey key) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("DELETE FROM " + table + " WHERE scope = ? AND key_id = ? AND status = ?")) {
            s.setString(1, key.scope());
            s.setString(2, key.id());
            s.setString(3, RecordStatus.IN_PROGRESS.name());
            s.executeUpdate();
        }
    }

    /**
     * Deletes at most {@code limit} expired records. The base statement selects the batch with a
     * standard {@code FETCH FIRST} subquery on the expiry index, and checks the expiry again on
     * the deleted row itself: a record that a concurrent transaction took over while the delete
     * waited for its lock is no longer expired, and must survive.
     *
     * @param c the connection
     * @param table the table
     * @param now the current time
     * @param limit the batch size
     * @return the number deleted
     * @throws SQLException if the delete fails
     */
    public int purgeExpired(Connection c, String table, Instant now, int limit) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("DELETE FROM " + table + " WHERE (scope, key_id) IN (SELECT scope, key_id FROM "
                + table + " WHERE expires_at <= ? ORDER BY expires_at FETCH FIRST " + limit + " ROWS ONLY) AND expires_at <= ?")) {
            s.setLong(1, now.toEpochMilli());
            s.setLong(2, now.toEpochMilli());
            return s.executeUpdate();
        }
    }

    /**
     * Reads a record from the current row, starting at column {@code first} in {@link #COLUMNS} order.
     *
     * @param rs the result set, on a row
     * @param first the index of the {@code scope} column
     * @return the record
     * @throws SQLException if reading fails
     */
    protected StoredRecord readRecord(ResultSet rs, int first) throws SQLException {
        IdempotencyKey key = IdempotencyKey.of(rs.getString(first), rs.getString(first + 1));
        long completed = rs.getLong(first + 7);
        Instant completedAt = rs.wasNull() ? null : Instant.ofEpochMilli(completed);
        return new StoredRecord(key, Fingerprint.fromValue(rs.getString(first + 2)), RecordStatus.valueOf(rs.getString(first + 3)),
                rs.getString(first + 4), rs.getBytes(first + 5), Instant.ofEpochMilli(rs.getLong(first + 6)), completedAt,
                Instant.ofEpochMilli(rs.getLong(first + 8)));
    }

    /**
     * @param c the connection
     * @param savepoint a savepoint to release; failures are ignored (some drivers do not support it)
     */
    protected static void releaseQuietly(Connection c, Savepoint savepoint) {
        try {
            c.releaseSavepoint(savepoint);
        } catch (SQLException | UnsupportedOperationException ignored) {
            // Releasing is an optimisation; the savepoint ends with the transaction anyway.
        }
    }

    private static String readResource(String path) {
        try (InputStream in = SqlDialect.class.getClassLoader().getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("DDL resource missing from the classpath: " + path);
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
