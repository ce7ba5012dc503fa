package dev.idempotency.jdbc.dialect;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * PostgreSQL 12 and later.
 *
 * <p><b>Cost</b>, in round trips (counted by {@code PostgresIsolationTest} on the wire, and by a
 * counting connection): a first execution costs <b>2</b>, the claim and the completing
 * {@code UPDATE}; a replay or a mismatch costs <b>1</b>, the claim. Taking over an expired record
 * costs one more, the take-over {@code UPDATE} (3). In a transaction that {@code JdbcTransactions}
 * runs, the completing {@code UPDATE} travels with the {@code COMMIT} ({@link #completionWithCommit}):
 * a first execution there costs one round trip for the claim, the work's own, and one for the
 * result and the commit together.
 *
 * <p><b>The claim</b> is three statements sent in one round trip (pgjdbc sends them with a single
 * Sync): a {@code SELECT} that keeps the caller's {@code lock_timeout} in the transaction-local
 * setting {@code idempotency.lock_timeout} and sets the policy's ({@code set_config(..., true)}, as
 * {@code SET LOCAL} does); a plain {@code INSERT ... ON CONFLICT DO NOTHING} (a duplicate is a row
 * count of 0, never an error, so the caller's transaction is never aborted by it); and a
 * {@code SELECT} that sets the caller's {@code lock_timeout} back and reads the key's record. The
 * caller's setting is so unchanged once the round trip returns, with no timer in the driver. The
 * read is a statement of its own, so under READ COMMITTED its snapshot sees a record that a
 * concurrent claimer committed while the insert waited: that claim replays at once. Only a record
 * found expired costs a second round trip, the take-over {@code UPDATE} ({@code WHERE expires_at <=
 * now}), bounded by the lock timeout as the other waiting statements are (below); if it updates
 * nothing (another claimer took the record over first), the claim runs once more. The claim
 * deliberately does not use {@code ON CONFLICT DO UPDATE ... WHERE expired}: that form row-locks
 * the record even when the {@code WHERE} is false, so every replay would hold a lock until its
 * transaction ends and concurrent replays of one key would queue behind each other. Here a replay
 * takes no lock.
 *
 * <p>A concurrent claim that is still open is waited for by the insert, bounded by the policy's
 * lock timeout to the millisecond. A wait that runs out gives {@code InProgress}, and <b>the
 * transaction is then aborted</b> (SQLState 55P03; the setting goes with the rollback): roll it
 * back. The other statements that can wait (the take-over, a chunk's insert, the lease operations)
 * bound their wait with pgjdbc's {@code PgStatement.setQueryTimeoutMs} (a cancelling timer; 57014),
 * or with {@link java.sql.Statement#setQueryTimeout}, whole seconds, on another driver. Under
 * REPEATABLE READ and SERIALIZABLE a claimer that committed while the insert waited makes
 * PostgreSQL report a serialization failure (40001), which reaches the caller as
 * {@code TransactionConflictException}: roll back and retry, and the retry replays.
 *
 * <p>Errors: 23505 duplicate key, 57014 (query cancelled by the timeout) and 55P03
 * ({@code lock_timeout}) are lock timeouts, class 40 (40001, 40P01) conflicts, 42P01 a missing
 * table: the base class's classification, which is PostgreSQL's.
 *
 * <p>Purging deletes at most {@code limit} expired rows, chosen once in a materialized
 * {@code WITH} (a {@code LIMIT} subquery under {@code IN} may be rescanned, and with
 * {@code SKIP LOCKED} each rescan would pick further rows), skipping rows that another
 * transaction has locked (a take-over in progress): it never waits, and never deletes a record
 * that was taken over.
 *
 * <p>Stateless and thread-safe.
 */
public class PostgresDialect extends SqlDialect {

    private static final String R_COLUMNS = COLUMNS.replaceAll("(\\w+)", "r.$1");

    @Override
    public String name() {
        return "PostgreSQL";
    }

    /** Inserts and reads in one round trip (see above). */
    @Override
    public ClaimStrategy claimStrategy() {
        return ClaimStrategy.ONE_ROUND_TRIP;
    }

    @Override
    public String currentTimeMillisQuery() {
        return "SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)";
    }

    /** The transaction-local setting that keeps the caller's {@code lock_timeout} while the claim's insert runs. */
    private static final String SAVED_LOCK_TIMEOUT = "idempotency.lock_timeout";

    @Override
    public String claimStatement(TableName table, Duration lockTimeout) {
        // One round trip (pgjdbc sends the three with a single Sync): keep the caller's lock_timeout and set
        // the policy's; the plain insert, which waits for a concurrent claimer up to it; set the caller's
        // back, reading the record in the same statement (a statement of its own: under READ COMMITTED its
        // snapshot sees a record a concurrent claimer committed while the insert waited).
        return "SELECT set_config('" + SAVED_LOCK_TIMEOUT + "', current_setting('lock_timeout'), true),"
                + " set_config('lock_timeout', '" + lockTimeoutMillis(lockTimeout) + "', true); "
                + multiRowClaimInsert(table, 1) + " ON CONFLICT (scope, key_id) DO NOTHING; "
                + "SELECT set_config('lock_timeout', current_setting('" + SAVED_LOCK_TIMEOUT + "'), true), " + R_COLUMNS
                + " FROM (VALUES (1)) AS one (x) LEFT JOIN " + table + " r ON r.scope = ? AND r.key_id = ?";
    }

    /**
     * @param timeout the policy's lock timeout
     * @return it in whole milliseconds for {@code lock_timeout}: at least 1 (0 would mean no limit),
     *     at most {@link Integer#MAX_VALUE} (PostgreSQL's maximum)
     */
    private static long lockTimeoutMillis(Duration timeout) {
        long millis = timeout.compareTo(Duration.ofMillis(Integer.MAX_VALUE)) >= 0 ? Integer.MAX_VALUE : timeout.toMillis();
        return Math.max(1, millis);
    }

    /**
     * A chunk is claimed writing first, as the single claim does: per 500 keys, one
     * {@code INSERT ... SELECT FROM unnest(...) ON CONFLICT DO NOTHING RETURNING} (six array
     * parameters, one statement text for every chunk size) claims every absent key and says which (a
     * duplicate is a row not returned, never an error); only the keys it did not insert are then
     * read, in one {@code SELECT}, and an expired one is taken over key by key. A first chunk of new
     * keys so costs one statement to claim. The insert runs under a savepoint, so that a lock wait
     * that runs out (a concurrent claimer of one of the keys) does not abort the transaction: the
     * slice is then claimed key by key, each waiting as a single claim does.
     */
    @Override
    public ChunkClaiming chunkClaiming() {
        return ChunkClaiming.INSERT_FIRST;
    }

    @Override
    public String claimInsertReturningKeys(TableName table) {
        return "INSERT INTO " + table + " (scope, key_id, fingerprint, status, created_at, expires_at) SELECT * FROM unnest("
                + "CAST(? AS VARCHAR[]), CAST(? AS VARCHAR[]), CAST(? AS VARCHAR[]), CAST(? AS VARCHAR[]),"
                + " CAST(? AS BIGINT[]), CAST(? AS BIGINT[])) ON CONFLICT (scope, key_id) DO NOTHING RETURNING scope, key_id";
    }

    /**
     * A chunk's outcomes are recorded in one {@code UPDATE ... FROM unnest(...)} of seven arrays,
     * instead of a batch of one {@code UPDATE} per key (PostgreSQL runs each statement of a batch on
     * its own) or a {@code VALUES} list of seven parameters per key (whose planning alone took longer
     * than the update of 100 keys).
     */
    @Override
    public String completionArrays(TableName table) {
        return "UPDATE " + table + " t SET status = v.status, result_codec = v.codec,"
                + " result = v.result, completed_at = v.completed_at, expires_at = v.expires_at FROM unnest("
                + "CAST(? AS VARCHAR[]), CAST(? AS VARCHAR[]), CAST(? AS VARCHAR[]), CAST(? AS VARCHAR[]),"
                + " CAST(? AS BYTEA[]), CAST(? AS BIGINT[]), CAST(? AS BIGINT[]))"
                + " AS v (scope, key_id, status, codec, result, completed_at, expires_at)"
                + " WHERE t.scope = v.scope AND t.key_id = v.key_id";
    }

    /** pgjdbc's query timeout in milliseconds; the query timeout in seconds on another driver. */
    @Override
    public LockWait lockWait() {
        return LockWait.QUERY_TIMEOUT_MILLIS;
    }

    @Override
    public boolean completesWithCommit() {
        return true;
    }

    /**
     * The completing {@code UPDATE}, wrapped so that it divides by the number of rows it updated (a
     * record not found fails it with 22012, division by zero, and the server then skips the rest up
     * to the round trip's end, the {@code COMMIT} included), then {@code COMMIT}: pgjdbc sends the two
     * statements of one prepared statement with a single Sync. Its own {@code commit()} afterwards
     * sends nothing, the transaction being over.
     */
    @Override
    public String completionWithCommit(TableName table) {
        return "WITH done AS (UPDATE " + table + " SET status = ?, result_codec = ?,"
                + " result = ?, completed_at = ?, expires_at = ? WHERE scope = ? AND key_id = ? RETURNING 1)"
                + " SELECT 1 / CAST((SELECT count(*) FROM done) AS INTEGER); COMMIT";
    }

    @Override
    public boolean writesLastWithCommit() {
        return true;
    }

    /**
     * An {@code INSERT} of the completed record that, on a conflict, replaces the
     * record only if it has expired ({@code ON CONFLICT DO UPDATE ... WHERE expires_at <= now}),
     * wrapped so that it divides by the number of rows it wrote (an unexpired record fails it with
     * 22012, and the server skips the rest of the round trip, the {@code COMMIT} included), then
     * {@code COMMIT}, all after {@code SET LOCAL lock_timeout} to the policy's lock timeout, in
     * milliseconds. The insert waits for a concurrent writer of the key that is still open, up to the
     * lock timeout (55P03 then, and nothing committed); if that writer commits, its row is the
     * conflict. After a refusal the transaction is rolled back here, and the record read in a fresh
     * snapshot. Under REPEATABLE READ and SERIALIZABLE a record committed after the snapshot fails the
     * insert with 40001, a conflict: the retry finds it.
     */
    @Override
    public String lastWriteWithCommit(TableName table, Duration lockTimeout) {
        // SET LOCAL bounds this transaction's lock waits from here to its end, in the same round trip: no
        // cancelling timer, which could race the COMMIT, and nothing left in the session afterwards.
        return "SET LOCAL lock_timeout = " + lockTimeoutMillis(lockTimeout)
                + "; WITH w AS (" + completedRecordInsert(table)
                + " ON CONFLICT (scope, key_id) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, status = EXCLUDED.status,"
                + " result_codec = EXCLUDED.result_codec, result = EXCLUDED.result, created_at = EXCLUDED.created_at,"
                + " completed_at = EXCLUDED.completed_at, expires_at = EXCLUDED.expires_at WHERE " + table + ".expires_at <= ?"
                + " RETURNING 1) SELECT 1 / CAST((SELECT count(*) FROM w) AS INTEGER); COMMIT";
    }

    /**
     * 22012, division by zero: the completion sent with the {@code COMMIT} found no record, or the
     * write sent with it found an unexpired one.
     */
    @Override
    public boolean isRecordMissing(SqlError e) {
        return e.hasState("22012") || super.isRecordMissing(e);
    }

    @Override
    public String purgeStatement(TableName table, int limit, String only) {
        return "WITH batch AS MATERIALIZED (SELECT scope, key_id FROM " + table
                + " WHERE expires_at <= ?" + only + " ORDER BY expires_at LIMIT " + limit + " FOR UPDATE SKIP LOCKED) DELETE FROM " + table
                + " t USING batch WHERE t.scope = batch.scope AND t.key_id = batch.key_id AND t.expires_at <= ?";
    }

    /**
     * {@code fsync=off} (nothing is forced to the disk) or {@code synchronous_commit=off} (a commit
     * returns before its WAL is flushed): a crash of the server loses acknowledged commits.
     */
    @Override
    public List<String> durabilityQueries() {
        return List.of("SHOW fsync", "SHOW synchronous_commit");
    }

    @Override
    public Optional<String> nonDurableCommits(List<@Nullable String> answers) {
        if ("off".equalsIgnoreCase(answers.get(0))) {
            return Optional.of("PostgreSQL fsync=off: nothing is forced to the disk, so a crash of the server can lose"
                    + " committed transactions; set fsync=on");
        }
        if ("off".equalsIgnoreCase(answers.get(1))) {
            return Optional.of("PostgreSQL synchronous_commit=off: a commit returns before it is flushed, so a crash of the"
                    + " server loses the last ones; set synchronous_commit=on (or local, remote_write, remote_apply)");
        }
        return Optional.empty();
    }
}
