package dev.idempotency.jdbc.dialect;

import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * H2 2.x. Uses the standard claim of {@link SqlDialect}: a first execution costs a {@code SELECT},
 * an {@code INSERT} and an {@code UPDATE}; a replay costs one {@code SELECT}. Under READ UNCOMMITTED,
 * whose plain read returns other transactions' uncommitted rows, a record the {@code SELECT} found
 * is read again with {@code SELECT ... FOR UPDATE}, which waits for the transaction that holds it
 * and returns the committed record: a replay there costs 2.
 *
 * <p>H2 rolls back a failed statement alone, so a duplicate-key insert (a concurrent claim that
 * committed) is met without a savepoint and leaves the transaction usable. A concurrent claim that
 * is still open is waited for up to the policy's lock timeout, to the millisecond, whatever H2's own
 * {@code LOCK_TIMEOUT} (2 seconds unless the URL or session sets it): on an embedded database the
 * statement runs with the session's lock timeout set to the policy's, in memory, and the session's
 * own value is restored at once (no statement is sent for it, and the caller's setting is what it was
 * before and after), whether the connection comes from H2's driver, H2's own pool or another pool. A
 * wait that runs out gives {@code InProgress}, and the transaction stays usable.
 * Over H2's TCP server, where the session is remote, the wait is bounded as the base class does, by
 * the query timeout (whole seconds, two {@code SET QUERY_TIMEOUT} commands around the statement), and
 * at most by H2's {@code LOCK_TIMEOUT}.
 *
 * <p>A missing table is reported by H2 in three ways, all read as missing: 42S02 (error 42102)
 * when other tables exist, 42S04 (42104) on a database with no table at all, and 42S03 (42103)
 * when a table of that name exists in another letter case (a quoted {@code "Idempotency_Record"}).
 */
public class H2Dialect extends SqlDialect {

    @Override
    public String name() {
        return "H2";
    }

    @Override
    public String currentTimeMillisQuery() {
        return "SELECT CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP(3)) * 1000 AS BIGINT)";
    }

    /**
     * A chunk is claimed key by key: H2 2.3 filters a {@code key_id IN (...)} list over every record
     * of the scope rather than looking each key up in the primary key, so one {@code SELECT} of a
     * chunk grows with the table (measured: a 100,000-item job took 55 s, and its rerun 90 s, against
     * 24 s and 4 s key by key).
     */
    @Override
    public ChunkClaiming chunkClaiming() {
        return ChunkClaiming.KEY_BY_KEY;
    }

    @Override
    public boolean failedStatementAbortsTransaction() {
        return false;
    }

    /**
     * Class 40, and 90143 (a row not found in the primary index): at READ UNCOMMITTED, H2 can find
     * another transaction's uncommitted row in the key's index and then miss it in the table, when
     * that transaction rolled back in between. Nothing is wrong with the data; run again, the
     * transaction reads the record, or its absence, as committed.
     */
    @Override
    public boolean isTransactionConflict(SqlError e) {
        return e.hasState("90143") || super.isTransactionConflict(e);
    }

    /**
     * The completed record is inserted first, a plain {@code INSERT}: a duplicate (23505) fails that
     * statement alone, and the claim then runs.
     */
    @Override
    public String completedRecordInsertFirst(TableName table) {
        return completedRecordInsert(table);
    }

    /** On an embedded database, the session's lock timeout, to the millisecond; else the query timeout. */
    @Override
    public LockWait lockWait() {
        return LockWait.SESSION_LOCK_TIMEOUT;
    }

    @Override
    public boolean isMissingTable(SqlError e) {
        return e.hasState("42S03") || e.hasState("42S04") || super.isMissingTable(e);
    }

    /** 90097: the database was opened read-only ({@code ACCESS_MODE_DATA=r}). */
    @Override
    public boolean isReadOnly(SqlError e) {
        return e.vendorCode() == 90097 || super.isReadOnly(e);
    }

    /**
     * An embedded database (H2's {@code SessionLocal}, in the application's process), whatever the
     * pool in front of it; over H2's TCP server the commits wait in the server's process instead.
     */
    @Override
    public boolean nonDurableCommitsDieWithTheApplication(boolean inProcessSession) {
        return inProcessSession;
    }

    /**
     * {@code WRITE_DELAY} above 0 (500 ms by default for a file database): H2 acknowledges a commit
     * and writes it to the file up to that long after, so a killed process loses the commits of its
     * last moments. An in-memory database reports 0.
     */
    @Override
    public List<String> durabilityQueries() {
        return List.of("SELECT SETTING_VALUE FROM INFORMATION_SCHEMA.SETTINGS WHERE SETTING_NAME = 'WRITE_DELAY'");
    }

    @Override
    public Optional<String> nonDurableCommits(List<@Nullable String> answers) {
        return DurabilityAnswers.unless(answers.get(0), "0", delay -> "H2 WRITE_DELAY=" + delay + ": a commit is written to the file"
                + " up to " + delay + " ms after it returns, so a process killed in that time loses it; add ;WRITE_DELAY=0 to the JDBC URL");
    }
}
