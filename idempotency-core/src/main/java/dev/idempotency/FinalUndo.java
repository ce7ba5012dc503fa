package dev.idempotency;

/**
 * How the writes of work whose failure is final (per the key policy) are undone, in the
 * transactional modes: to a savepoint, or by rolling the whole transaction back. The caller's
 * transaction can only be undone to a savepoint; a transaction the library runs itself is rolled
 * back whole instead, and the failure recorded in another (a chunk runs again, with a savepoint per
 * item), so that work which does not fail finally pays for no savepoint.
 */
enum FinalUndo {
    /** A savepoint before the work (before each item of a chunk), rolled back on a final failure. */
    SAVEPOINT,
    /**
     * No savepoint: a final failure throws {@link FinalFailure}, so that the transaction's owner
     * rolls the whole transaction back and records the failure in another one.
     */
    TRANSACTION
}
