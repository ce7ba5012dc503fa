package dev.idempotency;

/**
 * The work for one item of a chunk ({@link Idempotency#executeChunk}): the item's business change,
 * in the chunk's transaction. It must not commit, roll back or close the transaction.
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
