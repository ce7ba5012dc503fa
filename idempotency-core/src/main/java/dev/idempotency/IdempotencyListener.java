package dev.idempotency;

import java.time.Duration;

/**
 * Told about every attempt, for metrics and tracing. Never told result bodies. What it hears is what
 * the caller gets, once (contract 8, docs/contract.md):
 * <ul>
 *   <li>one {@link #onOutcome} per outcome returned to the caller: a chunk of n items
 *       ({@link Idempotency#executeChunk}, {@link ManagedIdempotency#executeChunk}, each chunk of a
 *       {@link BatchJob}) is n calls, in input order, each with the chunk's elapsed time;</li>
 *   <li>one {@link #onError} per exception that reaches the caller, a refused or conflicted commit
 *       included; for a chunk, with the key of its first item;</li>
 *   <li>one {@link #onRetry} per attempt that the library runs again after a conflict: such an
 *       attempt reaches neither {@code onOutcome} nor {@code onError}.</li>
 * </ul>
 * When the library runs the transaction ({@link ManagedIdempotency}: transactional mode run for
 * the caller, write-last, lease mode, chunks, and so {@link BatchJob}), the outcome is reported
 * after the commit, so an attempt whose commit fails is heard as an error, never as executed. In
 * the caller's own transaction ({@link Idempotency}) the library cannot see the commit: the
 * outcome is reported when {@code execute} (or {@code executeChunk}) returns, before the caller
 * commits, and a commit that then fails is the caller's to count.
 *
 * <p>Calls happen on the attempt's thread; a listener that throws is logged and ignored, and what
 * the caller gets is unchanged. Implementations must be thread-safe.
 */
public interface IdempotencyListener {

    /** A listener that does nothing. */
    IdempotencyListener NONE = new IdempotencyListener() {
    };

    /**
     * An outcome reaches the caller: after the commit when the library runs the transaction, when
     * {@code execute} returns in the caller's own.
     *
     * @param key the key
     * @param status the outcome's kind
     * @param elapsed the time from the start of {@code execute} to the outcome, work, retries and
     *     commit included; for an item of a chunk, the chunk's
     */
    default void onOutcome(IdempotencyKey key, Outcome.Status status, Duration elapsed) {
    }

    /**
     * An exception reaches the caller: the work's own, or the library's (a commit that the database
     * refused, or a conflict that outlasted the retries, included). Told once per call.
     *
     * @param key the key; for a chunk, the key of its first item; {@code null} if none is known
     * @param failure the exception that reaches the caller
     * @param elapsed the time from the start of {@code execute} to the failure
     */
    default void onError(IdempotencyKey key, Throwable failure, Duration elapsed) {
    }

    /**
     * A transaction that the library runs ({@link ManagedIdempotency}) failed with a conflict that
     * the database resolved by aborting it, and will be run again after {@code backoff}. The
     * attempt that failed is heard here only: its outcome, if it had one before the commit failed,
     * never reaches {@link #onOutcome}.
     *
     * @param key the key; for a chunk, the key of its first item
     * @param attempt the attempt that failed: 1 for the first
     * @param failure what it failed with
     * @param backoff the pause before the next attempt
     */
    default void onRetry(IdempotencyKey key, int attempt, Throwable failure, Duration backoff) {
    }

    /**
     * The store could not be reached, and lease mode runs the call without deduplication, as
     * {@link StoreUnavailablePolicy#RUN_WITHOUT_DEDUPLICATION} says: told before the call runs,
     * once per such call. Its outcome reaches {@link #onOutcome} as well.
     *
     * @param key the key the call would have been recorded under
     * @param unavailable what the store's claim failed with
     */
    default void onRunWithoutDeduplication(IdempotencyKey key, StoreUnavailableException unavailable) {
    }

    /**
     * The store found that its database acknowledges commits before they are durable (H2's
     * {@code WRITE_DELAY}, SQLite's {@code synchronous=OFF}, PostgreSQL's
     * {@code synchronous_commit=off}, ...): a crash can then lose a commit after it returned, the
     * key's record with it, and a retry runs the work again. Told once per engine, on the thread of
     * the first call that sees it: the engine hands its listener to its store
     * ({@link dev.idempotency.spi.IdempotencyStore#heardBy}), so a listener is given to the engine
     * only, never to the store.
     *
     * @param database the database, as the store's dialect names it
     * @param setting the setting and how to make commits durable
     */
    default void onNonDurableCommits(String database, String setting) {
    }
}
