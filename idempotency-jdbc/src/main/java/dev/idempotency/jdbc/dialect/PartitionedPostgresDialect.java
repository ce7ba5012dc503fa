package dev.idempotency.jdbc.dialect;

import dev.idempotency.jdbc.internal.Partitions;

/**
 * PostgreSQL 12 and later, with the record table partitioned by the UTC day of {@code expires_at}
 * (DDL {@code ddl/postgresql-partitioned.sql}), so that purging a day of records is dropping its
 * partition ({@code PostgresPartitions.dropExpired}): no row-by-row {@code DELETE}, no dead rows, no
 * vacuum debt, and a table that holds only the retention window. The bounded
 * {@link #purgeExpired purge} still works, row by row, across partitions.
 *
 * <p><b>The key's uniqueness.</b> A partitioned table's unique constraints must contain the
 * partition key, so the primary key is {@code (scope, key_id, expires_at)}, and the database no
 * longer refuses a second record of one key. The claim therefore serialises the claimers of one key
 * itself: it first takes a transaction-scoped advisory lock on the key
 * ({@code pg_advisory_xact_lock}, on the hashes of scope and id; a collision only makes two keys
 * wait for each other), then reads the record and inserts or takes it over as
 * {@link ClaimStrategy#READ_FIRST} does ({@link ClaimStrategy#KEY_LOCK_FIRST}). The lock is held until the claimer's transaction ends, so the
 * next claimer reads the committed record and replays it. This needs <b>READ COMMITTED</b> (each
 * statement reads what is committed when it starts): under REPEATABLE READ or SERIALIZABLE a
 * snapshot taken before the lock would hide the record, so the claim refuses those levels
 * (SQLState 0A000) instead of inserting a second record. The lock wait is bounded by the policy's
 * lock timeout, as in {@link PostgresDialect}; a wait that runs out gives {@code InProgress} and
 * aborts the transaction (roll it back).
 *
 * <p><b>Cost</b>: a first execution costs 4 statements (the lock with a read of the isolation
 * level, the read, the insert under a savepoint, the completing {@code UPDATE}); a replay 2.
 * Chunks are claimed key by key. Every other operation is {@link PostgresDialect}'s.
 *
 * <p><b>Partitions.</b> Create them ahead of time, for every day a new record can expire in (at
 * least the retention plus a day), with {@code PostgresPartitions.create}, from a daily job; a record whose
 * day has no partition lands in the default partition, which should stay empty (a day partition
 * cannot be created over rows of the default one). Drop the days that have ended with
 * {@code PostgresPartitions.dropExpired}. Both run DDL; each takes a short exclusive lock on the table, so
 * give their transaction a {@code lock_timeout} and run them again later if it runs out.
 */
public class PartitionedPostgresDialect extends PostgresDialect {

    @Override
    public String name() {
        return "PostgreSQL (partitioned by expiry day)";
    }

    /** @return {@code ddl/postgresql-partitioned.sql}: the columns of {@code postgresql.sql}, partitioned */
    @Override
    public String ddlResource() {
        return "dev/idempotency/jdbc/ddl/postgresql-partitioned.sql";
    }

    /** The DDL, with the default partition in the table's schema. */
    @Override
    public String ddl(TableName table) {
        return super.ddl(table).replace("TABLE IF NOT EXISTS " + table.simpleName() + "_default",
                "TABLE IF NOT EXISTS " + Partitions.partitionName(table, "default"));
    }

    /** The key's advisory lock, then the read-first claim. */
    @Override
    public ClaimStrategy claimStrategy() {
        return ClaimStrategy.KEY_LOCK_FIRST;
    }

    @Override
    public KeyLock keyLock() {
        return new KeyLock("SELECT current_setting('transaction_isolation'), pg_advisory_xact_lock(hashtext(?), hashtext(?))",
                "read committed");
    }

    /** No: the table does not refuse a second record of one key, so a write-last record goes through the claim. */
    @Override
    public boolean writesLastWithCommit() {
        return false;
    }

    /** Key by key, each a single claim under a savepoint: the multi-row insert relies on a unique key this table lacks. */
    @Override
    public ChunkClaiming chunkClaiming() {
        return ChunkClaiming.KEY_BY_KEY;
    }
}
