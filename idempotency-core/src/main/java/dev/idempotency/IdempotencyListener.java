package dev.idempotency;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

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
 *       attempt reaches neither {@code onOutcome} nor {@code onError};</li>
 *   <li>one {@link #onDuplicate} per replay whose cause an adapter can tell (a message consumer
 *       tells a redelivery from a second send), told by the adapter through
 *       {@link Idempotency#reportDuplicate}, in addition to the replay's {@code onOutcome}.</li>
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
    default void onError(@Nullable IdempotencyKey key, Throwable failure, Duration elapsed) {
    }

    /**
     * A transaction that the library runs ({@link ManagedIdempotency}) failed with a conflict that
     * the database resolved by aborting it, and will be run again after {@code backoff}. The
     * attempt that failed is heard here only: its outcome, if it had one before the commit failed,
     * never reaches {@link #onOutcome}.
     *
     * @param key the key; for a chunk, the key of its first item ({@code null} for an empty chunk)
     * @param attempt the attempt that failed: 1 for the first
     * @param failure what it failed with
     * @param backoff the pause before the next attempt
     */
    default void onRetry(@Nullable IdempotencyKey key, int attempt, Throwable failure, Duration backoff) {
    }

    /**
     * A duplicate arrived and was replayed, and the adapter that received it can tell why: a
     * message consumer, for one, tells a message delivered again at the same position (its consumer
     * crashed or lost its partition before it acknowledged it) from the same message sent twice (a
     * producer that retried a send). Told by the adapter through
     * {@link Idempotency#reportDuplicate}, once per duplicate, after the replay's {@link #onOutcome};
     * a plain replay, whose cause nobody can tell, is heard through {@code onOutcome} only.
     *
     * @param key the key
     * @param cause a short name of the cause, chosen by the adapter and stable across releases
     *     (its Javadoc lists them), for a metric's tag
     */
    default void onDuplicate(IdempotencyKey key, String cause) {
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

    /**
     * A purge ({@link Idempotency#purgeExpired}) deleted expired records of which {@code count} were
     * abandoned claims: claims committed without their result (a work ended its caller's
     * transaction, see {@link AbandonedClaimException}), which refused every retry of their key
     * until they expired. Each was a key whose work may have run without its result recorded: a
     * count above zero calls for finding the work that ends its transaction. Told on the purge's
     * thread, once per purge batch that found any, by stores that can tell them apart (the JDBC
     * store: a record in progress with no lease); the engine hands its listener to its store
     * ({@link dev.idempotency.spi.IdempotencyStore#heardBy}).
     *
     * @param count how many of the records the batch deleted were abandoned claims, at least 1
     */
    default void onAbandonedClaimsPurged(int count) {
    }

    /**
     * A {@link RecoveryWorker} acted on a named operation that its client abandoned: it resumed it,
     * its resumed attempt failed and will be tried again, it gave the operation up after its last
     * attempt (recording {@link RecoveryGaveUpException} as its final failure), or it found one that
     * it cannot run and reports it (its name is not registered with this worker, it has no
     * recovery point to resume from, or its recovery point cannot be decoded). Told on the worker's
     * thread; the worker's own attempts are heard here only, not by {@link #onOutcome}.
     *
     * @param key the operation's key
     * @param operation the name it was registered under
     * @param action what the worker did
     * @param failure the resumed attempt's failure for {@link RecoveryAction#RETRYING}; otherwise {@code null}
     */
    default void onRecovery(IdempotencyKey key, String operation, RecoveryAction action, @Nullable Throwable failure) {
    }
}
