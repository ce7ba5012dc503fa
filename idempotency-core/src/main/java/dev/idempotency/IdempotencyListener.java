package dev.idempotency;

import java.time.Duration;

/**
 * Told about every attempt, for metrics and tracing. Never told result bodies. Calls happen on the
 * attempt's thread after its outcome is known; a listener that throws is logged and ignored.
 * Implementations must be thread-safe.
 */
public interface IdempotencyListener {

    /** A listener that does nothing. */
    IdempotencyListener NONE = new IdempotencyListener() {
    };

    /**
     * An attempt ended with an outcome.
     *
     * @param key the key
     * @param status the outcome's kind
     * @param elapsed the time from the start of {@code execute} to the outcome, work included
     */
    default void onOutcome(IdempotencyKey key, Outcome.Status status, Duration elapsed) {
    }

    /**
     * An attempt ended with an exception: the work's own, or the library's.
     *
     * @param key the key
     * @param failure the exception that reaches the caller
     * @param elapsed the time from the start of {@code execute} to the failure
     */
    default void onError(IdempotencyKey key, Throwable failure, Duration elapsed) {
    }

    /**
     * A transaction that the library runs ({@link ManagedIdempotency}) failed with a conflict that
     * the database resolved by aborting it, and will be run again after {@code backoff}.
     *
     * @param key the key
     * @param attempt the attempt that failed: 1 for the first
     * @param failure what it failed with
     * @param backoff the pause before the next attempt
     */
    default void onRetry(IdempotencyKey key, int attempt, Throwable failure, Duration backoff) {
    }

    /**
     * The store found that its database acknowledges commits before they are durable (H2's
     * {@code WRITE_DELAY}, SQLite's {@code synchronous=OFF}, PostgreSQL's
     * {@code synchronous_commit=off}, ...): a crash can then lose a commit after it returned, the
     * key's record with it, and a retry runs the work again. Told once per store, on the thread of
     * the call that found it.
     *
     * @param database the database, as the store's dialect names it
     * @param setting the setting and how to make commits durable
     */
    default void onNonDurableCommits(String database, String setting) {
    }
}
