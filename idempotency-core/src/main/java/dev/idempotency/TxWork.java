package dev.idempotency;

/**
 * Work that runs inside a transaction: the business change of a managed execution, or the local
 * writes of a {@link Phases phase}. It must not commit, roll back or close the transaction: the
 * library does that.
 *
 * @param <C> the transaction type (a JDBC {@code Connection}, a Jdbi {@code Handle}, ...)
 * @param <T> its result
 * @param <X> the checked exception it may throw ({@link RuntimeException} if none)
 */
@FunctionalInterface
public interface TxWork<C, T, X extends Exception> {

    /**
     * @param tx the open transaction
     * @return the result
     * @throws X on failure
     */
    T apply(C tx) throws X;
}
