package dev.idempotency.jdbc.dialect;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.jdbc.internal.Statements;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
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
 * locks). Inserting first would save a round trip, but make every replay a locking write. Under
 * READ UNCOMMITTED a first execution costs 4 as well, and a replay <b>2</b>: the plain read may
 * return another transaction's uncommitted record, so a record it found is read again with
 * {@code SELECT ... FOR UPDATE}, which waits for that transaction and returns the committed record.
 *
 * <p><b>The insert</b> is {@code INSERT ... ON DUPLICATE KEY UPDATE attempts = attempts + 1}: a
 * duplicate is a row count of 2, never an error, and never {@code INSERT IGNORE}, which would also
 * silence truncation. The duplicate branch must change the row: with the drivers' default "found
 * rows" counting, a no-op such as {@code scope = scope} counts 1, the same as an insert.
 *
 * <p>A concurrent claim that is still open is waited for up to the policy's lock timeout, in whole
 * seconds ({@link LockWait#QUERY_TIMEOUT}); a wait that runs out gives {@code InProgress}, and
 * <b>the transaction stays usable</b>. Under REPEATABLE READ and SERIALIZABLE, waiters of a claim
 * that rolls back may be chosen as deadlock victims, and with {@code innodb_snapshot_isolation=ON}
 * a duplicate may fail with 1020: both reach the caller as the retryable
 * {@code TransactionConflictException}, and the retry replays.
 *
 * <p>Results up to 16 MiB fit the column, but the statement recording one must fit the connection's
 * {@code max_allowed_packet} ({@link #statementLimitQuery()}): else {@code ResultOverPacketLimitException}.
 */
public class MariaDbDialect extends SqlDialect {

    private static final String COUNTING_DUPLICATES = " ON DUPLICATE KEY UPDATE attempts = attempts + 1";
    /** The longest {@code max_statement_time} a bounded lock wait is given. */
    private static final Duration MOST_LOCK_TIMEOUT = Duration.ofDays(365);

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

    @Override
    public String claimInsert(TableName table) {
        return multiRowClaimInsert(table, 1) + COUNTING_DUPLICATES;
    }

    @Override
    public String completedRecordInsertFirst(TableName table) {
        return completedRecordInsert(table) + COUNTING_DUPLICATES;
    }

    /**
     * {@code SET STATEMENT max_statement_time=S FOR ...}, in seconds to the millisecond (at least
     * 0.001: zero would mean no limit); a wait that runs out fails with 1969 (70100). MariaDB's
     * syntax: MySQL has no {@code SET STATEMENT}, and its R2DBC executor is not run here.
     */
    @Override
    public String boundedLockWait(String statement, Duration lockTimeout) {
        long millis = Statements.boundedMillis(lockTimeout, MOST_LOCK_TIMEOUT);
        return "SET STATEMENT max_statement_time=" + millis / 1000 + "." + String.format(Locale.ROOT, "%03d", millis % 1000)
                + " FOR " + statement;
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
                + " SET " + Statements.completing("t.", column -> "v." + column);
    }

    @Override
    public String purgeStatement(TableName table, int limit, String expired, String only) {
        return "DELETE FROM " + table + " WHERE " + expired + only + " ORDER BY expires_at LIMIT " + limit;
    }

    @Override
    public boolean isDuplicateKey(SqlError e) {
        return e.vendorCode() == 1062 || super.isDuplicateKey(e);
    }

    /** 1969 (70100) and 1205 end MariaDB's waits; 1317 ({@code KILL QUERY}), 3024 and a driver timeout MySQL 8's (not run here). */
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
        return DurabilityAnswers.unless(answers.get(0), "1", flush -> name() + " innodb_flush_log_at_trx_commit=" + flush + ": the log"
                + " is flushed about once a second, not at each commit, so a crash loses the last acknowledged commits; set it to 1");
    }
}
