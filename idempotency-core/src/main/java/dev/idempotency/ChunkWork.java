package dev.idempotency;

/**
 * The work for one item of a chunk in a transaction the library runs
 * ({@link ManagedIdempotency#executeChunk}, {@link BatchJob}): the item's business change, given the
 * chunk's transaction, which the library begins, commits and, after a conflict, runs again whole
 * ({@code (tx, item) -> book(tx, item)}). It must not commit, roll back or close the transaction.
 *
 * <p>To run a chunk in a transaction of the caller's own
 * ({@link Idempotency#executeChunk}), the work is an {@link ItemWork} instead, given the item only.
 *
 * <p>Called on the thread that runs the chunk, for one item at a time in input order, and again for
 * the chunk's new items when a conflict retries it; an instance shared by threads that run chunks
 * at once must be thread-safe.
 *
 * @param <C> the transaction type
 * @param <I> the item type
 * @param <T> its result
 * @param <X> the checked exception it may throw ({@link RuntimeException} if none)
 */
@FunctionalInterface
public interface ChunkWork<C, I, T, X extends Exception> {

    /**
     * @param tx the chunk's transaction
     * @param item the item, whose key the transaction holds
     * @return the result, recorded for the item's key
     * @throws X on failure
     */
    T apply(C tx, I item) throws X;
}
