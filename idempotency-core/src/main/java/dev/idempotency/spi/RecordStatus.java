package dev.idempotency.spi;

/** The state of a stored record. Stores persist {@link #name()} and read it back with {@link #valueOf}. */
public enum RecordStatus {
    /** Claimed; the work has not finished (or, in transactional mode, its transaction is open). */
    IN_PROGRESS,
    /** The work finished and its result is recorded. */
    COMPLETED,
    /** The work failed with a final failure, which is recorded. */
    FAILED
}
