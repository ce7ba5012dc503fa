package dev.idempotency.jdbc.internal;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.jdbc.dialect.SqlDialect;
import dev.idempotency.jdbc.dialect.SqlError;
import dev.idempotency.jdbc.dialect.TableName;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.LeasedCompletion;
import dev.idempotency.spi.PendingOperation;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.RecoveryPoint;
import dev.idempotency.spi.StoredRecord;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The one JDBC executor: runs every operation of the store on one database, as that database's
 * {@link SqlDialect} describes it. The algorithms live once, here and in the focused classes beside
 * it ({@link Claims} and {@link ClaimRounds}, {@link ChunkClaims}, {@link Completions},
 * {@link Leases}, {@link LockWaits}, {@link PendingOperations}, {@link Savepoints},
 * {@link ServerSettings}, {@link Partitions}), keyed by the dialect's strategy values; the dialect
 * runs nothing.
 *
 * <p>Not an API. Thread-safe: it keeps no state but its dialect; creating one costs nothing.
 */
public final class JdbcExecutor {

    /**
     * Whether a row has expired, by the clock that timed it ({@link #judgedBy}): its parameters the
     * later of the two clocks' nows (for the expiry index), the engine's now and the database's.
     */
    private static final String EXPIRED = "expires_at <= ? AND (" + Statements.expired("", "?") + ")";

    /** The records {@link #purgeExpiredAbandonedClaims} deletes, as a condition to add to the batch's selection. */
    private static final String ABANDONED_CLAIM = " AND status = '" + RecordStatus.IN_PROGRESS.name() + "' AND lease_until IS NULL";

    private final SqlDialect dialect;

    private JdbcExecutor(SqlDialect dialect) {
        this.dialect = dialect;
    }

    /**
     * @param dialect the database's description
     * @return its executor
     */
    public static JdbcExecutor of(SqlDialect dialect) {
        return new JdbcExecutor(dialect);
    }

    /** @return the description this executor reads */
    public SqlDialect dialect() {
        return dialect;
    }

    // ---- errors, as the dialect classifies them --------------------------------------------------

    /**
     * @param e a failure
     * @return it as the dialects read it
     */
    public static SqlError error(SQLException e) {
        return new SqlError(e.getSQLState(), e.getErrorCode(), e.getMessage(), e instanceof SQLTimeoutException);
    }

    /**
     * @param e a failure
     * @return {@link SqlDialect#isDuplicateKey}
     */
    public boolean isDuplicateKey(SQLException e) {
        return dialect.isDuplicateKey(error(e));
    }

    /**
     * @param e a failure
     * @return {@link SqlDialect#isLockTimeout}
     */
    public boolean isLockTimeout(SQLException e) {
        return dialect.isLockTimeout(error(e));
    }

    /**
     * @param e a failure
     * @return {@link SqlDialect#isTransactionConflict}
     */
    public boolean isTransactionConflict(SQLException e) {
        return dialect.isTransactionConflict(error(e));
    }

    /**
     * @param e a failure
     * @return {@link SqlDialect#isMissingTable}
     */
    public boolean isMissingTable(SQLException e) {
        return dialect.isMissingTable(error(e));
    }

    /**
     * @param e a failure
     * @return {@link SqlDialect#isReadOnly}
     */
    public boolean isReadOnly(SQLException e) {
        return dialect.isReadOnly(error(e));
    }

    /**
     * @param e a failure
     * @return {@link SqlDialect#isRecordMissing}
     */
    public boolean isRecordMissing(SQLException e) {
        return dialect.isRecordMissing(error(e));
    }

    // ---- the claim ---------------------------------------------------------------------------------

    /**
     * Claims the key, or finds its record, in the dialect's {@link SqlDialect#claimStrategy()}.
     *
     * @param c the caller's connection, in a transaction
     * @param table the table
     * @param request the attempt
     * @return the claim
     * @throws SQLException if a statement fails for another reason than a duplicate or a lock timeout
     */
    public Claim claim(Connection c, TableName table, ClaimRequest request) throws SQLException {
        return claim(c, table, request, false);
    }

    /** As {@link #claim}, for a request whose now is the database's clock (a lease claim's). */
    Claim claimByDatabaseClock(Connection c, TableName table, ClaimRequest request) throws SQLException {
        return claim(c, table, request, true);
    }

    private Claim claim(Connection c, TableName table, ClaimRequest request, boolean databaseClock) throws SQLException {
        Optional<String> refusal = dialect.keyRefusal(request.key());
        if (refusal.isPresent()) {
            throw new SQLException(refusal.get(), "22023");
        }
        return Claims.claim(this, c, table, request, databaseClock);
    }

    /**
     * The clock rule: a record of the transactional modes was timed by the engine, and is judged by
     * the request's now; a record that lease mode wrote was timed by the database, and is judged by
     * the database's now (asked for only then, unless the request's now is the database's already).
     *
     * @return the instant by which {@code found}'s expiry is judged
     */
    Instant judgedBy(Connection c, Records.Row found, ClaimRequest r, boolean databaseClock) throws SQLException {
        return found.leaseWritten() && !databaseClock ? databaseNow(c) : r.now();
    }

    /**
     * Claims the keys of a chunk, sorted as given, as {@link SqlDialect#chunkClaiming()} says.
     *
     * @param c the caller's connection, in a transaction
     * @param table the table
     * @param requests the requests, sorted by key, no key twice
     * @return one claim per request, in order
     * @throws SQLException if a statement fails for another reason than a duplicate or a lock timeout
     */
    public List<Claim> claimAll(Connection c, TableName table, List<ClaimRequest> requests) throws SQLException {
        return ChunkClaims.claimAll(this, c, table, requests);
    }

    /** Inserts an in-progress record; {@code false} if the key has one (a concurrent claim committed). */
    boolean insertClaim(Connection c, TableName table, ClaimRequest r) throws SQLException {
        try {
            return Savepoints.undoingFailure(c, dialect.failedStatementAbortsTransaction(), () -> {
                try (PreparedStatement s = c.prepareStatement(dialect.claimInsert(table))) {
                    Records.bindClaim(s, r);
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
     * Takes over an expired record, as a record of the transactional modes (no owner token, no
     * lease); {@code false} if it is no longer expired. A record lease mode wrote is judged
     * expired by {@code leaseNow}, the database's clock.
     */
    boolean takeOver(Connection c, TableName table, ClaimRequest r, Instant leaseNow) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(Statements.takeOver(table))) {
            Records.bindTakeOver(s, 1, r, leaseNow);
            return withLockTimeout(s, r.lockTimeout(), s::executeUpdate) == 1;
        }
    }

    /**
     * Runs a statement that may wait for another transaction's lock, bounded as
     * {@link SqlDialect#lockWait()} says.
     *
     * @param s the statement
     * @param timeout the lock timeout
     * @param execution runs it
     * @param <T> its result
     * @return what the execution returned
     * @throws SQLException if it fails, a lock timeout included
     */
    public <T> T withLockTimeout(PreparedStatement s, Duration timeout, Execution<T> execution) throws SQLException {
        return LockWaits.run(this, s, timeout, execution);
    }

    /** @return acquired if the update wrote {@code acquiredRows}, busy if its wait ran out, {@code null} if the key has a record */
    @Nullable Claim writeOrNull(PreparedStatement s, Duration lockTimeout, int acquiredRows) throws SQLException {
        return ClaimRounds.busyOnLockTimeout(this, Claim.busy(), () ->
                withLockTimeout(s, lockTimeout, s::executeUpdate) == acquiredRows ? Claim.acquired() : null);
    }

    /**
     * @param c the connection
     * @param table the table
     * @param key the key
     * @return the key's record as the connection's transaction sees it, if there is one
     * @throws SQLException if the query fails
     */
    public Optional<StoredRecord> find(Connection c, TableName table, IdempotencyKey key) throws SQLException {
        Records.Row row = Records.select(c, table, key, "");
        return Optional.ofNullable(row == null ? null : row.record());
    }

    // ---- completion, write-last, release, purge ------------------------------------------------------

    /**
     * @param c the connection
     * @param table the table
     * @param done what to record
     * @return the rows updated: 1, or 0 if the claimed record is gone
     * @throws SQLException if the update fails
     */
    public int complete(Connection c, TableName table, Completion done) throws SQLException {
        return Completions.complete(c, table, done);
    }

    /**
     * Records the outcome and commits, in one round trip where the dialect gives a statement for it.
     *
     * @param c the connection, in a transaction that the library runs
     * @param table the table
     * @param done what to record
     * @throws SQLException if the update or the commit fails; {@link #isRecordMissing} tells a record not found
     */
    public void completeAndCommit(Connection c, TableName table, Completion done) throws SQLException {
        Completions.completeAndCommit(this, c, table, done);
    }

    /**
     * @param c the connection
     * @param table the table
     * @param completions what to record
     * @return the completions whose record was not found
     * @throws SQLException if a statement fails
     */
    public int completeAll(Connection c, TableName table, List<Completion> completions) throws SQLException {
        return Completions.completeAll(this, c, table, completions);
    }

    /**
     * Writes the key's record, complete with {@code done}, after the work has run.
     *
     * @param c the connection, in a transaction whose work has run
     * @param table the table
     * @param r the key, fingerprint, time and lock timeout
     * @param done the outcome
     * @return acquired if written; existing or busy if not (the caller rolls back)
     * @throws SQLException if a statement fails; {@link #isRecordMissing} tells a record that vanished
     */
    public Claim writeLast(Connection c, TableName table, ClaimRequest r, Completion done) throws SQLException {
        return Completions.writeLast(this, c, table, r, done);
    }

    /**
     * As {@link #writeLast}, and commits if written.
     *
     * @param c the connection, in a transaction that the library runs
     * @param table the table
     * @param r the key, fingerprint, time and lock timeout
     * @param done the outcome
     * @return acquired if written and committed; existing or busy if refused (nothing committed)
     * @throws SQLException if a statement or the commit fails otherwise
     */
    public Claim writeLastAndCommit(Connection c, TableName table, ClaimRequest r, Completion done) throws SQLException {
        return Completions.writeLastAndCommit(this, c, table, r, done);
    }

    /**
     * Deletes this transaction's in-progress claim.
     *
     * @param c the connection
     * @param table the table
     * @param key the key
     * @throws SQLException if the delete fails
     */
    public void release(Connection c, TableName table, IdempotencyKey key) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(Statements.release(table))) {
            s.setString(1, key.scope());
            s.setString(2, key.id());
            s.setString(3, RecordStatus.IN_PROGRESS.name());
            s.executeUpdate();
        }
    }

    /**
     * @param c the connection
     * @param table the table
     * @param now the current time
     * @param limit the batch size
     * @return the number of expired records deleted, at most {@code limit}, each judged by the clock
     *     that timed it (lease mode's records by the database's)
     * @throws SQLException if the delete fails
     */
    public int purgeExpired(Connection c, TableName table, Instant now, int limit) throws SQLException {
        return purge(c, dialect.purgeStatement(table, limit, EXPIRED, ""), now);
    }

    /**
     * @param c the connection
     * @param table the table
     * @param now the current time
     * @param limit the batch size
     * @return the number of expired abandoned claims (in progress, no lease) deleted, at most {@code limit}
     * @throws SQLException if the delete fails
     */
    public int purgeExpiredAbandonedClaims(Connection c, TableName table, Instant now, int limit) throws SQLException {
        return purge(c, dialect.purgeStatement(table, limit, EXPIRED, ABANDONED_CLAIM), now);
    }

    private int purge(Connection c, String sql, Instant now) throws SQLException {
        long engine = now.toEpochMilli();
        long database = databaseNow(c).toEpochMilli();
        long[] expired = {Math.max(engine, database), engine, database};
        int parameters = (int) sql.chars().filter(ch -> ch == '?').count();
        try (PreparedStatement s = c.prepareStatement(sql)) {
            for (int p = 0; p < parameters; p++) {
                s.setLong(p + 1, expired[p % 3]);
            }
            return s.executeUpdate();
        }
    }

    // ---- the server: clock, durability, statement limit ---------------------------------------------

    /**
     * @param c the connection
     * @return the database's current time, to the millisecond ({@link SqlDialect#currentTimeMillisQuery()})
     * @throws SQLException if the query fails
     */
    public Instant databaseNow(Connection c) throws SQLException {
        String query = dialect.currentTimeMillisQuery();
        try (PreparedStatement s = c.prepareStatement(query != null ? query : "SELECT CURRENT_TIMESTAMP");
             ResultSet rs = s.executeQuery()) {
            rs.next();
            return query != null ? Instant.ofEpochMilli(rs.getLong(1))
                    : rs.getObject(1, OffsetDateTime.class).toInstant().truncatedTo(ChronoUnit.MILLIS);
        }
    }

    /**
     * @param c a connection to the database, possibly in the caller's transaction; only read
     * @return the setting and its remedy, if the database acknowledges commits before they are durable
     * @throws SQLException if the database cannot be asked
     */
    public Optional<String> nonDurableCommits(Connection c) throws SQLException {
        return ServerSettings.nonDurableCommits(dialect, c);
    }

    /**
     * @param c a connection of the database
     * @return whether its non-durable commits die with the application's own process
     * @throws SQLException if the connection cannot be unwrapped
     */
    public boolean nonDurableCommitsDieWithTheApplication(Connection c) throws SQLException {
        return dialect.nonDurableCommitsDieWithTheApplication(LockWaits.isEmbeddedH2(c));
    }

    /**
     * @param limits the store's statement limits, read once per physical connection
     * @param c the connection that will send the statement
     * @param key the key
     * @param codec the codec's name
     * @param value the encoded result or recovery point, or {@code null}
     * @return the sizes, if the statement recording {@code value} would be over the server's limit
     * @throws SQLException if the limit cannot be read
     */
    public Optional<PacketOverflow> packetOverflow(StatementLimits limits, Connection c, IdempotencyKey key, String codec,
                                                   byte @Nullable [] value) throws SQLException {
        return ServerSettings.packetOverflow(dialect, limits, c, key, codec, value);
    }

    // ---- lease mode and named operations ---------------------------------------------------------------

    /**
     * @param c the engine's connection, in a transaction
     * @param table the table
     * @param r the attempt
     * @return the lease claim, by the database's clock
     * @throws SQLException if a statement fails for another reason than a lock timeout
     */
    public LeaseClaim claimLease(Connection c, TableName table, LeaseRequest r) throws SQLException {
        return Leases.claim(this, c, table, r);
    }

    /**
     * @param c the connection
     * @param table the table
     * @param key the key
     * @param ownerToken the holder's token
     * @param lease the new lease
     * @return the new end, if the token still holds the key
     * @throws SQLException if a statement fails
     */
    public Optional<Instant> extendLease(Connection c, TableName table, IdempotencyKey key, String ownerToken, Duration lease)
            throws SQLException {
        return Leases.extend(this, c, table, key, ownerToken, lease);
    }

    /**
     * @param c the connection
     * @param table the table
     * @param key the key
     * @param ownerToken the holder's token
     * @param point the recovery point
     * @return whether it was recorded (the token still holds the key)
     * @throws SQLException if the update fails
     */
    public boolean checkpoint(Connection c, TableName table, IdempotencyKey key, String ownerToken, RecoveryPoint point)
            throws SQLException {
        return Leases.checkpoint(c, table, key, ownerToken, point);
    }

    /**
     * @param c the connection
     * @param table the table
     * @param ownerToken the holder's token
     * @param done what to record
     * @return when it was recorded, by the database's clock, if the token still holds the key
     * @throws SQLException if a statement fails
     */
    public Optional<Instant> completeLeased(Connection c, TableName table, String ownerToken, LeasedCompletion done)
            throws SQLException {
        return Leases.complete(this, c, table, ownerToken, done);
    }

    /**
     * @param c the connection
     * @param table the table
     * @param key the key
     * @param ownerToken the holder's token
     * @return whether the lease was ended (the token still held the key)
     * @throws SQLException if the update fails
     */
    public boolean releaseLease(Connection c, TableName table, IdempotencyKey key, String ownerToken) throws SQLException {
        return Leases.release(c, table, key, ownerToken);
    }

    /**
     * @param c the connection
     * @param table the table
     * @param key the key
     * @param ownerToken the holder's token
     * @param operation the operation's name
     * @return whether it was enlisted (the token still holds the key)
     * @throws SQLException if a statement fails
     */
    public boolean enlist(Connection c, TableName table, IdempotencyKey key, String ownerToken, String operation)
            throws SQLException {
        return PendingOperations.enlist(c, table, key, ownerToken, operation);
    }

    /**
     * @param c the connection
     * @param table the table
     * @param key the key
     * @throws SQLException if the statement fails
     */
    public void delist(Connection c, TableName table, IdempotencyKey key) throws SQLException {
        PendingOperations.delist(c, table, key);
    }

    /**
     * @param c the connection
     * @param table the table
     * @param after the last key of the previous page, or {@code null}
     * @param limit the most entries
     * @return a page of the named operations in progress, in key order
     * @throws SQLException if a statement fails
     */
    public List<PendingOperation> pending(Connection c, TableName table, @Nullable IdempotencyKey after, int limit)
            throws SQLException {
        return PendingOperations.page(c, table, after, limit, databaseNow(c));
    }

    @Override
    public String toString() {
        return "JdbcExecutor[" + dialect.name() + "]";
    }
}
