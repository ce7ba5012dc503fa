package dev.idempotency.jdbc.dialect;

import dev.idempotency.jdbc.internal.Statements;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * PostgreSQL 12 and later.
 *
 * <p><b>Cost</b>, in round trips (counted on the wire and by a counting connection): a first
 * execution costs <b>2</b>, the claim and the completing {@code UPDATE}; a replay or a mismatch
 * <b>1</b>, the claim; taking over an expired record one more (3). In a transaction that
 * {@code JdbcTransactions} runs, the completing {@code UPDATE} travels with the {@code COMMIT}.
 *
 * <p><b>The claim</b> ({@link ClaimStrategy#ONE_ROUND_TRIP}) is three statements that pgjdbc sends
 * with a single Sync: a {@code SELECT} that keeps the caller's {@code lock_timeout} in the
 * transaction-local setting {@code idempotency.lock_timeout} and sets the policy's; a plain
 * {@code INSERT ... ON CONFLICT DO NOTHING} (a duplicate is a row count of 0, never an error); and a
 * {@code SELECT} that sets the caller's {@code lock_timeout} back and reads the record. It does not
 * use {@code ON CONFLICT DO UPDATE ... WHERE expired}: that form row-locks the record even when the
 * {@code WHERE} is false, so concurrent replays of one key would queue behind each other.
 *
 * <p>A concurrent claim that is still open is waited for by the insert, up to the policy's lock
 * timeout to the millisecond. A wait that runs out gives {@code InProgress}, and <b>the transaction
 * is then aborted</b> (55P03): roll it back. The other statements that can wait bound their wait with
 * pgjdbc's millisecond query timeout ({@link LockWait#QUERY_TIMEOUT_MILLIS}; 57014). Under REPEATABLE
 * READ and SERIALIZABLE a claimer that committed while the insert waited makes PostgreSQL report a
 * serialization failure (40001): {@code TransactionConflictException}, and the retry replays.
 */
public class PostgresDialect extends SqlDialect {

    private static final String R_COLUMNS = COLUMNS.replaceAll("(\\w+)", "r.$1");
    /** The server's now, in epoch milliseconds. */
    private static final String NOW = "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)";
    private static final String SAVED_LOCK_TIMEOUT = "idempotency.lock_timeout";
    private static final String ON_CONFLICT = " ON CONFLICT (scope, key_id) DO ";
    /** The largest {@code lock_timeout} PostgreSQL accepts. */
    private static final Duration MOST_LOCK_TIMEOUT = Duration.ofMillis(Integer.MAX_VALUE);

    @Override
    public String name() {
        return "PostgreSQL";
    }

    @Override
    public ClaimStrategy claimStrategy() {
        return ClaimStrategy.ONE_ROUND_TRIP;
    }

    @Override
    public String currentTimeMillisQuery() {
        return "SELECT " + NOW;
    }

    @Override
    public String claimStatement(TableName table, Duration lockTimeout) {
        return "SELECT set_config('" + SAVED_LOCK_TIMEOUT + "', current_setting('lock_timeout'), true),"
                + " set_config('lock_timeout', '" + Statements.boundedMillis(lockTimeout, MOST_LOCK_TIMEOUT) + "', true); "
                + multiRowClaimInsert(table, 1) + ON_CONFLICT + "NOTHING; "
                + "SELECT set_config('lock_timeout', current_setting('" + SAVED_LOCK_TIMEOUT + "'), true), " + R_COLUMNS
                + " FROM (VALUES (1)) AS one (x) LEFT JOIN " + table + " r ON r.scope = ? AND r.key_id = ?";
    }

    /** @return {@code unnest} of one array parameter per type: four {@code VARCHAR}s, then {@code more} */
    private static String unnest(String... more) {
        return Stream.concat(Stream.of("VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"), Stream.of(more))
                .map(type -> "CAST(? AS " + type + "[])").collect(Collectors.joining(", ", "unnest(", ")"));
    }

    /**
     * @return {@code write}, given {@code RETURNING 1}, then the division of 1 by the rows it wrote (none fail it
     *     with 22012, and the server skips the rest of the round trip, the {@code COMMIT} included), then
     *     {@code COMMIT}, with a single Sync; the driver's {@code commit()} afterwards sends nothing
     */
    private static String failingIfNoneThenCommit(String name, String write) {
        return "WITH " + name + " AS (" + write + " RETURNING 1) SELECT 1 / CAST((SELECT count(*) FROM " + name + ") AS INTEGER); COMMIT";
    }

    @Override
    public ChunkClaiming chunkClaiming() {
        return ChunkClaiming.INSERT_FIRST;
    }

    @Override
    public String claimInsertReturningKeys(TableName table) {
        return "INSERT INTO " + table + " (scope, key_id, fingerprint, status, created_at, expires_at) SELECT * FROM "
                + unnest("BIGINT", "BIGINT") + ON_CONFLICT + "NOTHING RETURNING scope, key_id";
    }

    /**
     * One {@code UPDATE ... FROM unnest(...)} of seven arrays: a batch runs each statement on its own,
     * and a {@code VALUES} list of seven parameters per key took longer to plan than 100 updates.
     */
    @Override
    public String completionArrays(TableName table) {
        return "UPDATE " + table + " t SET " + Statements.completing("", column -> "v." + column) + " FROM "
                + unnest("BYTEA", "BIGINT", "BIGINT") + " AS v (scope, key_id, status, codec, result, completed_at, expires_at)"
                + " WHERE t.scope = v.scope AND t.key_id = v.key_id";
    }

    @Override
    public LockWait lockWait() {
        return LockWait.QUERY_TIMEOUT_MILLIS;
    }

    @Override
    public boolean completesWithCommit() {
        return true;
    }

    /** The completing {@code UPDATE}, failing if it found no record, then {@code COMMIT}. */
    @Override
    public String completionWithCommit(TableName table) {
        return failingIfNoneThenCommit("done", Statements.completion(table));
    }

    @Override
    public boolean writesLastWithCommit() {
        return true;
    }

    /**
     * An {@code INSERT} of the completed record that replaces only an expired one, failing if it wrote
     * nothing (an unexpired record), then {@code COMMIT}, after {@code SET LOCAL lock_timeout}: a
     * concurrent writer still open is waited for up to the lock timeout (55P03, nothing committed).
     * {@code SET LOCAL} bounds the transaction's waits from there to its end, in the same round trip:
     * no cancelling timer, which could race the {@code COMMIT}, and nothing left in the session.
     */
    @Override
    public String lastWriteWithCommit(TableName table, Duration lockTimeout) {
        return "SET LOCAL lock_timeout = " + Statements.boundedMillis(lockTimeout, MOST_LOCK_TIMEOUT) + "; " + failingIfNoneThenCommit("w",
                completedRecordInsert(table) + ON_CONFLICT + "UPDATE SET " + Statements.replacing(column -> "EXCLUDED." + column, true)
                + " WHERE " + Statements.expired(table + ".", NOW));
    }

    /** 22012, division by zero: the write sent with the {@code COMMIT} found no record (or an unexpired one). */
    @Override
    public boolean isRecordMissing(SqlError e) {
        return e.hasState("22012") || super.isRecordMissing(e);
    }

    /**
     * The batch is chosen once in a materialized {@code WITH} (a {@code LIMIT} subquery under
     * {@code IN} may be rescanned), skipping rows another transaction has locked: it never waits.
     */
    @Override
    public String purgeStatement(TableName table, int limit, String expired, String only) {
        return "WITH batch AS MATERIALIZED (SELECT scope, key_id FROM " + table + " WHERE " + expired + only
                + " ORDER BY expires_at LIMIT " + limit + " FOR UPDATE SKIP LOCKED) DELETE FROM " + table
                + " t USING batch WHERE t.scope = batch.scope AND t.key_id = batch.key_id AND " + expired;
    }

    /** {@code fsync=off} or {@code synchronous_commit=off}: a crash of the server loses acknowledged commits. */
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
