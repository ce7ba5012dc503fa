package dev.idempotency;

/**
 * The work for one item of a chunk in a transaction the library runs
 * ({@link ManagedIdempotency#executeChunk}, {@link BatchJob}): the item's business change, given the
 * chunk's transaction. It must not commit, roll back or close the transaction.
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
