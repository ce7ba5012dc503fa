package dev.idempotency.jdbc.dialect;

import dev.idempotency.IdempotencyKey;
import java.util.List;
import java.util.Optional;
import java.util.function.IntFunction;
import org.jspecify.annotations.Nullable;


/**
 * MariaDB 10.6 and later, and MySQL 8 (InnoDB).
 *
 * <p><b>Cost</b>, each statement one round trip (counted by {@code MariaDbIsolationTest}, with a
 * counting connection and with the server's {@code Questions} counter): a first execution costs
 * <b>3</b> statements, a {@code SELECT} that finds nothing, the {@code INSERT} and the completing
 * {@code UPDATE}; a replay or a mismatch costs <b>1</b>, a {@code SELECT} that takes no lock.
 * Taking over an expired record costs 3 ({@code SELECT}, take-over {@code UPDATE}, completing
 * {@code UPDATE}); a duplicate that raced the insert, 3 ({@code SELECT}, {@code INSERT}, locking
 * {@code SELECT}). Under READ COMMITTED a first execution costs <b>4</b>: a locking
 * {@code SELECT ... FOR UPDATE} comes between the first {@code SELECT} and the {@code INSERT}
 * (below). Inserting first would save a first execution one round trip, but make every replay a
 * locking write, queueing concurrent replays of one key behind each other.
 *
 * <p><b>The insert</b> is {@code INSERT ... ON DUPLICATE KEY UPDATE attempts = attempts + 1}: a
 * duplicate (a concurrent claim that committed) is a row count of 2, never an error, and never
 * {@code INSERT IGNORE}, which would also silence truncation. The duplicate branch must change
 * the row: with the drivers' default "found rows" counting, a no-op such as {@code scope = scope}
 * counts 1, the same as an insert. The row is then read with a locking read, which sees the
 * committed record whatever this transaction's snapshot.
 *
 * <p>A concurrent claim that is still open is waited for, bounded by the policy's lock timeout
 * through {@link java.sql.Statement#setQueryTimeout} (whole seconds): MariaDB Connector/J 3 sends
 * the statement as {@code SET STATEMENT max_statement_time=N FOR ...}, which leaves the session's
 * settings unchanged. A wait that runs out (error 1969, SQLState 70100; or InnoDB's own
 * {@code innodb_lock_wait_timeout}, error 1205, if shorter) gives {@code InProgress}, and only the
 * waiting statement is rolled back: <b>the transaction stays usable</b>.
 *
 * <p><b>A claim that rolls back under several waiters.</b> A statement that waits for another
 * transaction's uncommitted row keeps a lock on it; when that transaction rolls back, the row is
 * removed and InnoDB turns the locks of the duplicate-key checks that waited on it (and, under
 * REPEATABLE READ and SERIALIZABLE, of every locking read) into gap locks, which block each
 * other's inserts: with two or more waiters, all but one would then be chosen as deadlock victims
 * (1213). Under READ COMMITTED a locking read's exclusive lock is not turned into a gap lock, and a
 * locking read that finds no row takes no lock, so there the claim waits in a
 * {@code SELECT ... FOR UPDATE} before it inserts: the waiters of a claim that rolls back wake with
 * no lock, one of them claims the key, and the others wait for it and replay (only duplicates that
 * race to the insert at the same instant still wait in it). Under REPEATABLE READ and SERIALIZABLE
 * no form of the claim avoids it (a locking read would also take a gap lock on every new key, and
 * two new claims would deadlock), so the claim is as above, and the waiters that lose reach the
 * caller as {@code TransactionConflictException} (retryable): the retry replays the winner's result,
 * or runs the work if no one holds the key. The transaction's level is read from the connection
 * ({@code Connection.getTransactionIsolation()}; MariaDB Connector/J 3 tracks it without a round trip).
 *
 * <p>Isolation: under READ COMMITTED and REPEATABLE READ a concurrent duplicate replays the
 * winner (but see above). Under SERIALIZABLE, and under REPEATABLE READ with {@code innodb_snapshot_isolation=ON}
 * (MariaDB 10.6.18 and later; on by default in recent releases), the database may instead roll the transaction back
 * (deadlock 1213 / SQLState 40001, or "record has changed since last read" 1020): that reaches the
 * caller as {@code TransactionConflictException}; the retry replays.
 *
 * <p>MySQL 8 is served by the same statements; its drivers bound the wait by {@code KILL QUERY}
 * (1317, a {@code SQLTimeoutException}) instead, which this dialect also reads as a lock timeout
 * (not run here: the test servers are PostgreSQL and MariaDB).
 *
 * <p>Errors: 1062 duplicate key; 1205, 1969, 1317, 3024 and SQLState 70100 lock timeouts; class 40
 * (1213) and 1020 conflicts; 1146 / 42S02 a missing table; 1792 and 1290 ({@code --read-only}) a read-only
 * transaction or server. Purging deletes at most {@code limit}
 * rows with {@code DELETE ... ORDER BY expires_at LIMIT n} (the table cannot be named in a
 * subquery of its own {@code DELETE}). Results up to 16 MiB fit the column, but the server's
 * {@code max_allowed_packet} must be larger than the statement that records the largest result:
 * before it is sent, that statement's size is checked against the connection's
 * {@code max_allowed_packet} (read once per connection), and a result (or lease mode's recovery
 * point) that would not fit is refused with {@code ResultOverPacketLimitException}, nothing sent,
 * the connection intact.
 *
 * <p>Stateless and thread-safe; the executor keeps each connection's {@code max_allowed_packet}.
 */
public class MariaDbDialect extends SqlDialect {

    @Override
    public String name() {
        return "MariaDB";
    }

    /** Reads first, waiting in a locking read (see above). */
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

    /**
     * The completed record is inserted first, counting 1 if it inserted and 2 if the key has a
     * record; the claim then finds that record, or takes it over if it has expired.
     */
    @Override
    public String completedRecordInsertFirst(TableName table) {
        return completedRecordInsert(table) + " ON DUPLICATE KEY UPDATE attempts = attempts + 1";
    }

    @Override
    public String statementLimitQuery() {
        return "SELECT @@max_allowed_packet";
    }

    /**
     * As MariaDB Connector/J sends it by default (text protocol): each byte once, and twice for the
     * bytes it escapes ({@code NUL}, quotes, backslash); key and codec at most twice; the statement's
     * text, numbers and owner token within 1,024 bytes. Over the limit fails with 1153 and the server
     * drops the connection.
     */
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

    /**
     * One multi-table {@code UPDATE} joined to a derived table of the results, read first and each
     * record reached through the primary key ({@code STRAIGHT_JOIN}, {@code FORCE INDEX}): a scan
     * would lock every row it reads. The count is of matched rows (Connector/J reports found rows).
     */
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
    public String purgeStatement(TableName table, int limit, String only) {
        return "DELETE FROM " + table + " WHERE expires_at <= ?" + only + " ORDER BY expires_at LIMIT " + limit;
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
