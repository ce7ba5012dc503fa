package dev.idempotency;

/**
 * The work for one item of a chunk run in the caller's own transaction
 * ({@link Idempotency#executeChunk}): the item's business change. It is given the item only: the
 * transaction is the one the caller holds and passed to {@code executeChunk}, which the work uses as
 * the caller has it ({@code item -> book(connection, item)}). It must not commit, roll back or close
 * the transaction.
 *
 * <p>Where the library begins, commits and retries the chunk's transaction
 * ({@link ManagedIdempotency#executeChunk}, {@link BatchJob}), the work is a {@link ChunkWork}
 * instead, which is given that transaction with each item.
 *
 * <p>Called on the thread of {@code executeChunk}, for one item at a time in input order; an
 * instance shared by threads that run chunks at once must be thread-safe.
 *
 * @param <I> the item type
 * @param <T> its result
 * @param <X> the checked exception it may throw ({@link RuntimeException} if none)
 */
@FunctionalInterface
public interface ItemWork<I, T, X extends Exception> {

    /**
     * @param item the item, whose key this transaction holds
     * @return the result, recorded for the item's key
     * @throws X on failure
     */
    T apply(I item) throws X;
}
