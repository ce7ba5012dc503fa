package dev.idempotency.jdbc.dialect;

import dev.idempotency.IdempotencyKey;
import java.util.Optional;

/**
 * HSQLDB 2.7 in MVCC mode ({@code hsqldb.tx=mvcc} in the URL; the default {@code LOCKS} mode locks
 * a written table whole until commit). Uses the claim of {@link SqlDialect} with a {@code MERGE ...
 * WHEN NOT MATCHED THEN INSERT}, so that a key that exists shows up as 0 rows, never as an error.
 * Measured: a first execution costs 3 statements ({@code SELECT}, {@code MERGE}, the completing
 * {@code UPDATE}), a replay 1 ({@code SELECT}).
 *
 * <p>Concurrent duplicates under READ COMMITTED: the {@code MERGE} waits for a claim that another
 * transaction holds open; if that commits, the {@code MERGE} inserts nothing and the record is
 * read and replayed; if it rolls back, the {@code MERGE} inserts. HSQLDB offers no lock timeout and
 * ignores the query timeout while a statement waits (measured on 2.7.4), so the wait is bounded by
 * cancelling the statement when the policy's lock timeout runs out: HSQLDB then fails it alone
 * (SQLState 40502), the transaction stays usable, and the claim gives {@code InProgress}. Under
 * REPEATABLE READ and SERIALIZABLE, HSQLDB does not wait: a duplicate of a claim that is open (even
 * one that will roll back), or that committed after this transaction began, fails at once with a
 * serialization failure (40001)
 * that rolls back the whole transaction, reported as the retryable
 * {@code TransactionConflictException}.
 *
 * <p>Text compares case-sensitively, but HSQLDB pads by default ({@code sql.pad_space=true}:
 * {@code 'a' = 'a '}), and a no-pad collation would be a schema object that cannot be created
 * "if not exists". So keys ending in a space are refused: two keys that do not end in a space are
 * equal with padding only if they are equal exactly, which makes every comparison exact. (The
 * default key policy refuses spaces anyway.) A missing table is recognised by HSQLDB's SQLState for
 * it, 42501 "user lacks privilege or object not found", which it also gives for a missing column.
 */
public class HsqldbDialect extends SqlDialect {

    @Override
    public String name() {
        return "HSQLDB";
    }

    @Override
    public String currentTimeMillisQuery() {
        return "VALUES (UNIX_MILLIS())";
    }

    /** HSQLDB claims through {@code MERGE}, one key per statement; a chunk is claimed key by key. */
    @Override
    public ChunkClaiming chunkClaiming() {
        return ChunkClaiming.KEY_BY_KEY;
    }

    /** HSQLDB undoes a failed statement alone; a serialization failure rolls the transaction back whole. */
    @Override
    public boolean failedStatementAbortsTransaction() {
        return false;
    }

    @Override
    public Optional<String> keyRefusal(IdempotencyKey key) {
        return key.scope().endsWith(" ") || key.id().endsWith(" ")
                ? Optional.of("HSQLDB compares text with PAD SPACE, so a key ending in a space would match the same key"
                        + " without that space; such keys are refused")
                : Optional.empty();
    }

    /** A key that exists is 0 rows, never a duplicate-key failure (not seen in READ COMMITTED). */
    @Override
    public String claimInsert(TableName table) {
        return "MERGE INTO " + table + " t USING (VALUES (?, ?, ?, ?, CAST(? AS BIGINT),"
                + " CAST(? AS BIGINT))) AS n (scope, key_id, fingerprint, status, created_at, expires_at)"
                + " ON t.scope = n.scope AND t.key_id = n.key_id WHEN NOT MATCHED THEN INSERT"
                + " (scope, key_id, fingerprint, status, created_at, expires_at)"
                + " VALUES (n.scope, n.key_id, n.fingerprint, n.status, n.created_at, n.expires_at)";
    }

    /** HSQLDB ignores the query timeout while a statement waits: the statement is cancelled. */
    @Override
    public LockWait lockWait() {
        return LockWait.CANCEL;
    }

    /** 40502: the statement was cancelled ("statement execution aborted"); the transaction goes on. */
    @Override
    public boolean isLockTimeout(SqlError e) {
        return e.hasState("40502");
    }

    @Override
    public boolean isTransactionConflict(SqlError e) {
        return super.isTransactionConflict(e) && !isLockTimeout(e);
    }

    @Override
    public boolean isMissingTable(SqlError e) {
        return e.hasState("42501");
    }
}
