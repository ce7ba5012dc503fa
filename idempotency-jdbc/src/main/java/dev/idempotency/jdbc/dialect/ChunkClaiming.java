package dev.idempotency.jdbc.dialect;

/**
 * How a database claims a slice (at most 500 keys) of a batch job's chunk
 * ({@link SqlDialect#chunkClaiming()}). A key that a slice's statements cannot settle (an expired
 * record, a concurrent claim) is claimed on its own, as a single claim; where a failed statement
 * aborts the transaction, under a savepoint, so that a key held past the lock timeout answers
 * {@code InProgress} and the chunk's other keys are still claimed.
 */
public enum ChunkClaiming {

    /** Key by key, each as a single claim. */
    KEY_BY_KEY,

    /**
     * One {@code SELECT} finds the existing records, one multi-row {@code INSERT}
     * ({@link SqlDialect#multiRowClaimInsert}) claims the absent keys; if that insert meets a
     * concurrent claim (a duplicate, or a lock wait that runs out), nothing is inserted and the
     * absent keys are claimed one by one. The base's.
     */
    READ_FIRST,

    /**
     * One {@code INSERT} of the keys as arrays that skips the keys that have a record and returns the
     * keys it inserted ({@link SqlDialect#claimInsertReturningKeys}), then one {@code SELECT} of the
     * others; if the insert's lock wait runs out, the slice is claimed key by key (PostgreSQL).
     */
    INSERT_FIRST
}
