package dev.idempotency.jdbc.dialect;

/**
 * How a database claims one key in the caller's transaction ({@link SqlDialect#claimStrategy()}):
 * the shape of the statements, which the executor runs, in rounds, for every database that names
 * it. Each shape inserts the key if it has no record, replays the record if it has an unexpired
 * one, and takes an expired one over; a lock wait that runs out gives {@code InProgress}.
 */
public enum ClaimStrategy {

    /**
     * Read the record; if absent, insert with {@link SqlDialect#claimInsert} (an {@code INSERT}, a
     * {@code MERGE}, an {@code INSERT ... ON DUPLICATE KEY}: its update count is 1 if it claimed); if
     * expired, take it over. A duplicate (a concurrent claimer committed) means read again. Under
     * READ UNCOMMITTED a record the first read found is read again with the exclusive locking read,
     * which waits for a transaction that holds it and sees the committed record. The base's: a first
     * execution costs a {@code SELECT}, the insert and the completing {@code UPDATE}.
     */
    READ_FIRST,

    /**
     * As {@link #READ_FIRST}, but a record that a concurrent claim may hold is read with a locking
     * read ({@link SqlDialect#lockingRead}): the first read is plain; if it finds nothing under
     * READ COMMITTED or READ UNCOMMITTED an exclusive locking read waits for an open claimer before
     * the insert; under READ UNCOMMITTED, whose plain read returns uncommitted rows, a record it found
     * is read again the same way, so that only a committed record is replayed. A later round reads
     * with a shared lock, which sees the committed record whatever the snapshot. The whole claim
     * answers {@code InProgress} if a wait runs out (MariaDB).
     */
    LOCKING_READ_FIRST,

    /**
     * First take a transaction-scoped lock on the key ({@link SqlDialect#keyLock()}), then claim as
     * {@link #READ_FIRST}: for a table that cannot refuse a second record of a key itself (the
     * partitioned PostgreSQL table).
     */
    KEY_LOCK_FIRST,

    /**
     * The statements of {@link SqlDialect#claimStatement} in one round trip: insert if absent, then
     * read the record as a statement after the insert sees it; an expired record is then taken over
     * (PostgreSQL).
     */
    ONE_ROUND_TRIP,

    /**
     * An upsert that takes the write lock first ({@link SqlDialect#claimUpsert}): it inserts, takes
     * an expired record over, or changes nothing; the record it did not claim is then read (SQLite,
     * whose reader cannot wait for the write lock).
     */
    UPSERT_FIRST
}
