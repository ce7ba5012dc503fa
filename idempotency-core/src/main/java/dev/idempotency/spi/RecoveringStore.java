package dev.idempotency.spi;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A leasing store that also lists the <b>named operations</b> in progress
 * ({@link dev.idempotency.Phases#named}), so that a {@link dev.idempotency.RecoveryWorker} can find
 * those whose client went away and resume them. Each method runs in a short transaction that the
 * engine begins and commits itself.
 *
 * <p>A store must keep these promises, which {@code idempotency-testkit} checks:
 * <ol>
 *   <li>{@link #enlist} is fenced like {@link #checkpoint}: it records the operation's name for the
 *       key only while the owner token holds the record in progress, in the caller's transaction (so
 *       that a claim that rolls back leaves no entry), and reports whether it did.</li>
 *   <li>{@link #delist} removes the key's entry in the caller's transaction (the one that records
 *       the operation's outcome), and does nothing if there is none.</li>
 *   <li>{@link #pending} lists every entry exactly once across its pages, in the order of the keys
 *       (scope, then id, compared as the store compares keys), each with what its record holds now,
 *       read by the store's own clock; an entry whose record is gone or no longer in progress is
 *       listed too (the worker removes it). Its cost is that of the entries, not of the records:
 *       with none in progress it reads nothing else.</li>
 * </ol>
 *
 * <p>Implementations must be thread-safe; one transaction is used by one thread at a time.
 *
 * @param <C> the transaction type
 */
public interface RecoveringStore<C> extends LeasingStore<C> {

    /**
     * {@inheritDoc}
     *
     * @return a recovering store that reports to {@code listener}; {@code this} if there is nothing
     *     to report
     */
    @Override
    default RecoveringStore<C> heardBy(IdempotencyListener listener) {
        return this;
    }

    /**
     * Records that the key's operation in progress is the one registered as {@code operation}.
     *
     * @param tx the claim's transaction
     * @param key the key
     * @param ownerToken the token that must still hold the record
     * @param operation the operation's name
     * @return whether the token still held the record, so that the name was recorded
     */
    boolean enlist(C tx, IdempotencyKey key, String ownerToken, String operation);

    /**
     * Removes the key's entry, if any.
     *
     * @param tx the transaction that records the operation's outcome, or the worker's own
     * @param key the key
     */
    void delist(C tx, IdempotencyKey key);

    /**
     * A page of the entries, in the order of their keys.
     *
     * @param tx a transaction
     * @param after the last key of the previous page, or {@code null} for the first page
     * @param limit the most entries to return, positive
     * @return the entries after {@code after}, at most {@code limit}; fewer only on the last page
     */
    List<PendingOperation> pending(C tx, @Nullable IdempotencyKey after, int limit);
}
