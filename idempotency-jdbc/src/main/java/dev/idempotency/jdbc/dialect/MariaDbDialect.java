package dev.idempotency.jdbc.dialect;

import dev.idempotency.IdempotencyKey;
import java.util.List;
import java.util.Optional;
import java.util.function.IntFunction;
import org.jspecify.annotations.Nullable;


/**
 * MariaDB 10.6 and later, and MySQL 8 (InnoDB).
 *
 * <p><b>Cost</b>, each statement one round trip (counted by {@code MariaDbTest}, with a counting
 * connection and with the server's {@code Questions} counter): a first execution costs <b>3</b>
 * statements, a {@code SELECT} that finds nothing, the {@code INSERT} and the completing
 * {@code UPDATE}; a replay or a mismatch costs <b>1</b>, a {@code SELECT} that takes no lock. Taking
 * over an expired record costs 3; a duplicate that raced the insert, 3 ({@code SELECT},
 * {@code INSERT}, locking {@code SELECT}). Under READ COMMITTED a first execution costs <b>4</b>: a
 * {@code SELECT ... FOR UPDATE} waits for an open claimer before the {@code INSERT}
 * ({@link ClaimStrategy#LOCKING_READ_FIRST}, whose Javadoc in the executor says why: InnoDB's gap
 * locks). Inserting first would save a round trip, but make every replay a locking write.
 *
 * <p><b>The insert</b> is {@code INSERT ... ON DUPLICATE KEY UPDATE attempts = attempts + 1}: a
 * duplicate is a row count of 2, never an error, and never {@code INSERT IGNORE}, which would also
 * silence truncation. The duplicate branch must change the row: with the drivers' default "found
 * rows" counting, a no-op such as {@code scope = scope} counts 1, the same as an insert.
 *
 * <p>A concurrent claim that is still open is waited for up to the policy's lock timeout, in whole
 * seconds (Connector/J 3 sends {@code SET STATEMENT max_statement_time=N FOR ...}); a wait that runs
 * out (1969, 70100; or 1205) gives {@code InProgress}, and <b>the transaction stays usable</b>. Under REPEATABLE
 * READ and SERIALIZABLE, waiters of a claim that rolls back may be chosen as deadlock victims, and
 * with {@code innodb_snapshot_isolation=ON} a duplicate may fail with 1020: both reach the caller as
 * the retryable {@code TransactionConflictException}, and the retry replays. MySQL 8's drivers
 * bound the wait by {@code KILL QUERY} (1317, a driver timeout), also read as a lock timeout (MySQL
 * is not run here).
 *
 * <p>Results up to 16 MiB fit the column, but the statement recording one must fit the connection's
 * {@code max_allowed_packet} ({@link #statementLimitQuery()}): a result or recovery point that would
 * not is refused with {@code ResultOverPacketLimitException}, nothing sent, the connection intact.
 *
 * <p>Stateless and thread-safe; the executor keeps each connection's {@code max_allowed_packet}.
 */
public class MariaDbDialect extends SqlDialect {

    @Override
    public String name() {
        return "MariaDB";
    }

    @Override
    public ClaimStrategy claimStrategy() {
        return ClaimStrategy.LOCKING_READ_FIRST;
    }

    @Override
    public String lockingRead(boolean exclusive) {
        return exclusive ? " FOR UPDATE" : " LOCK IN SHARE MODE";
    }

    @Override
    public boolean claimCountsDuplicates() {
        return true;
    }

    @Override
    public String currentTimeMillisQuery() {
        return "SELECT CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)";
    }

    /** A duplicate counts 2 (and one more attempt), never fails. */
    @Override
    public String claimInsert(TableName table) {
        return multiRowClaimInsert(table, 1) + " ON DUPLICATE KEY UPDATE attempts = attempts + 1";
    }

    /** The completed record is inserted first: 1 if it inserted, 2 if the key has a record (then claimed as usual). */
    @Override
    public String completedRecordInsertFirst(TableName table) {
        return completedRecordInsert(table) + " ON DUPLICATE KEY UPDATE attempts = attempts + 1";
    }

    @Override
    public String statementLimitQuery() {
        return "SELECT @@max_allowed_packet";
    }

    /** As Connector/J sends it (text protocol): the bytes it escapes ({@code NUL}, quotes, backslash) twice. */
    @Override
    public long statementBytes(IdempotencyKey key, String codec, byte[] value) {
        long size = super.statementBytes(key, codec, value);
        for (byte b : value) {
            if (b == 0 || b == '\'' || b == '"' || b == '\\') {
                size++;
            }
        }
        return size;
    }

    /** A multi-table {@code UPDATE} through the primary key ({@code FORCE INDEX}): a scan would lock every row it reads. */
    @Override
    public IntFunction<String> completionRowSets(TableName table) {
        return rows -> "UPDATE (SELECT ? AS scope, ? AS key_id, ? AS status,"
                + " ? AS codec, ? AS result, ? AS completed_at, ? AS expires_at"
                + " UNION ALL SELECT ?, ?, ?, ?, ?, ?, ?".repeat(rows - 1)
                + ") v STRAIGHT_JOIN " + table + " t FORCE INDEX (PRIMARY) ON t.scope = v.scope AND t.key_id = v.key_id"
                + " SET t.status = v.status, t.result_codec = v.codec,"
                + " t.result = v.result, t.completed_at = v.completed_at, t.expires_at = v.expires_at";
    }

    @Override
    public String purgeStatement(TableName table, int limit, String expired, String only) {
        return "DELETE FROM " + table + " WHERE " + expired + only + " ORDER BY expires_at LIMIT " + limit;
    }

    @Override
    public boolean isDuplicateKey(SqlError e) {
        return e.vendorCode() == 1062 || super.isDuplicateKey(e);
    }

    @Override
    public boolean isLockTimeout(SqlError e) {
        int code = e.vendorCode();
        return code == 1205 || code == 1969 || code == 1317 || code == 3024 || e.hasState("70100") || e.driverTimeout()
                || super.isLockTimeout(e);
    }

    @Override
    public boolean isTransactionConflict(SqlError e) {
        return e.vendorCode() == 1020 || super.isTransactionConflict(e);
    }

    /** 1792 (ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION) and 1290 with {@code --read-only} (ER_OPTION_PREVENTS_STATEMENT). */
    @Override
    public boolean isReadOnly(SqlError e) {
        return e.vendorCode() == 1792 || e.vendorCode() == 1290 && e.text().contains("read-only") || super.isReadOnly(e);
    }

    @Override
    public boolean isMissingTable(SqlError e) {
        return e.vendorCode() == 1146 || super.isMissingTable(e);
    }

    @Override
    public boolean failedStatementAbortsTransaction() {
        return false;
    }

    @Override
    public List<String> durabilityQueries() {
        return List.of("SELECT @@innodb_flush_log_at_trx_commit");
    }

    /** {@code innodb_flush_log_at_trx_commit} other than 1: the log is written (0) or flushed (2) about once a second. */
    @Override
    public Optional<String> nonDurableCommits(List<@Nullable String> answers) {
        String flush = answers.get(0);
        if (flush == null || flush.strip().equals("1")) {
            return Optional.empty();
        }
        return Optional.of(name() + " innodb_flush_log_at_trx_commit=" + flush.strip() + ": the log is flushed about once a"
                + " second, not at each commit, so a crash loses the last acknowledged commits; set it to 1");
    }
}
