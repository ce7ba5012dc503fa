package dev.idempotency.jdbc.dialect;

import dev.idempotency.jdbc.internal.Statements;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * SQLite 3.35 or later, through the xerial {@code sqlite-jdbc} driver, on a file in write-ahead-log
 * mode ({@code journal_mode=WAL}).
 *
 * <p>SQLite has one writer at a time, and a transaction that has read cannot wait for the write
 * lock: the busy handler is not called for a read-to-write upgrade, and once another writer has
 * committed, the reader's snapshot can never write ({@code SQLITE_BUSY_SNAPSHOT}). So the claim
 * writes first ({@link ClaimStrategy#UPSERT_FIRST}): an {@code INSERT ... ON CONFLICT DO UPDATE ...
 * WHERE expired} takes the write lock, waiting for another writer up to the policy's lock timeout
 * ({@link LockWait#QUERY_TIMEOUT}: the driver's busy timeout); then the record it found is read.
 * Measured: a first execution costs 2 statements (the upsert, the completing {@code UPDATE}), a
 * replay 2 (the upsert that changes nothing, a {@code SELECT}), holding the write lock for the rest
 * of its transaction.
 *
 * <p>What the caller should configure: WAL and a {@code busy_timeout} (URL
 * {@code jdbc:sqlite:file.db?journal_mode=WAL&busy_timeout=10000}) and either
 * <ul>
 *   <li>the default deferred transactions, calling {@code execute} before the transaction reads
 *       anything (then the claim waits for the write lock as above), or</li>
 *   <li>{@code transaction_mode=IMMEDIATE} ({@code SQLiteConfig.setTransactionMode}), where every
 *       transaction takes the write lock when it begins, waiting up to {@code busy_timeout} inside
 *       {@code setAutoCommit(false)}, {@code commit()} and {@code rollback()} (the driver begins the
 *       next transaction at once): concurrent duplicates then simply queue.</li>
 * </ul>
 * A deferred transaction that read before {@code execute} while another writer is active gets
 * {@code InProgress} at once (no wait is possible), and {@code TransactionConflictException}
 * (retryable) if that writer has committed since its snapshot. After a lock wait runs out the
 * transaction stays usable. Keys compare with the {@code BINARY} collation: exactly.
 */
public class SqliteDialect extends SqlDialect {

    @Override
    public String name() {
        return "SQLite";
    }

    @Override
    public ClaimStrategy claimStrategy() {
        return ClaimStrategy.UPSERT_FIRST;
    }

    /** The database's now, in epoch milliseconds. */
    private static final String NOW = "CAST(ROUND((julianday('now') - 2440587.5) * 86400000) AS INTEGER)";

    @Override
    public String currentTimeMillisQuery() {
        return "SELECT " + NOW;
    }

    /**
     * SQLite names an index's schema on the index, not on its table:
     * {@code CREATE INDEX main.t_expires ON t}.
     */
    @Override
    public String ddl(TableName table) {
        String ddl = super.ddl(table);
        if (table.schema().isEmpty()) {
            return ddl;
        }
        String simple = table.simpleName();
        return ddl.replace("INDEX IF NOT EXISTS " + simple + "_expires ON " + table,
                "INDEX IF NOT EXISTS " + table.schema().get() + "." + simple + "_expires ON " + simple);
    }

    @Override
    public String claimUpsert(TableName table) {
        return multiRowClaimInsert(table, 1) + " ON CONFLICT (scope, key_id) DO UPDATE SET "
                + Statements.replacing(column -> "excluded." + column, false) + " WHERE " + Statements.expired("", NOW);
    }

    @Override
    public String purgeStatement(TableName table, int limit, String expired, String only) {
        return "DELETE FROM " + table + " WHERE (scope, key_id) IN (SELECT scope, key_id FROM "
                + table + " WHERE " + expired + only + " ORDER BY expires_at LIMIT " + limit + ")";
    }

    /**
     * Key by key, each with the upsert above: a {@code SELECT} of the whole chunk first would read
     * before writing. A first chunk of n keys costs n upserts and one batch of completing updates; a
     * replayed one n upserts and n {@code SELECT}s.
     */
    @Override
    public ChunkClaiming chunkClaiming() {
        return ChunkClaiming.KEY_BY_KEY;
    }

    @Override
    public boolean isDuplicateKey(SqlError e) {
        String code = resultCode(e);
        return code.equals("SQLITE_CONSTRAINT_PRIMARYKEY") || code.equals("SQLITE_CONSTRAINT_UNIQUE");
    }

    /** {@code SQLITE_BUSY} or {@code SQLITE_LOCKED} (and their extended codes), but not a stale snapshot. */
    @Override
    public boolean isLockTimeout(SqlError e) {
        String code = resultCode(e);
        return (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) && !isTransactionConflict(e);
    }

    /** {@code SQLITE_BUSY_SNAPSHOT}: another writer committed after this transaction's snapshot. */
    @Override
    public boolean isTransactionConflict(SqlError e) {
        return resultCode(e).equals("SQLITE_BUSY_SNAPSHOT") || super.isTransactionConflict(e);
    }

    /** {@code SQLITE_READONLY} (and its extended codes): a database opened read-only, or a file it cannot write. */
    @Override
    public boolean isReadOnly(SqlError e) {
        return resultCode(e).startsWith("SQLITE_READONLY");
    }

    @Override
    public boolean isMissingTable(SqlError e) {
        return resultCode(e).equals("SQLITE_ERROR") && e.text().contains("no such table");
    }

    /** @return the extended result code's name that sqlite-jdbc puts first in its messages, or "" */
    private static String resultCode(SqlError e) {
        String m = e.message();
        int end = m == null || !m.startsWith("[") ? -1 : m.indexOf(']');
        return end < 0 ? "" : m.substring(1, end);
    }

    /**
     * {@code PRAGMA synchronous=OFF} on a file database: SQLite hands a commit to the operating
     * system without waiting for it to reach the disk, so a crash of the machine loses it.
     */
    @Override
    public List<String> durabilityQueries() {
        return List.of("PRAGMA synchronous", "SELECT file FROM pragma_database_list WHERE name = 'main'");
    }

    /** An in-memory database promises nothing: only a file's commits are judged. */
    @Override
    public Optional<String> nonDurableCommits(List<@Nullable String> answers) {
        String file = answers.get(1);
        if (!"0".equals(answers.get(0)) || file == null || file.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of("SQLite synchronous=OFF: a commit returns before it reaches the disk, so a crash of the machine"
                + " loses it; use synchronous=NORMAL (with journal_mode=WAL) or FULL");
    }
}
