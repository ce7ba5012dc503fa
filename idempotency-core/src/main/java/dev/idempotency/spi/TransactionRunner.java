package dev.idempotency.spi;

import dev.idempotency.TransactionConflictException;
import dev.idempotency.TxWork;

/**
 * Transactions that the library begins and ends itself: what the managed modes of
 * {@link dev.idempotency.ManagedIdempotency} need from a database, and nothing more. The core opens
 * no connection; {@code idempotency-jdbc} implements this for a {@code DataSource},
 * {@code idempotency-jdbi} for a Jdbi instance, and the testkit's in-memory store for its own
 * transactions.
 *
 * <p>Implementations must be thread-safe: each call runs one transaction, on the calling thread.
 *
 * @param <C> the transaction type handed to the callback
 */
public interface TransactionRunner<C> {

    /**
     * Begins a transaction, runs {@code work} in it, and commits it if {@code work} returns. If
     * {@code work} throws, or the commit fails, the transaction is rolled back and the exception
     * reaches the caller (a failed commit as an unchecked exception of the runner's choosing, with
     * the database's report as its cause).
     *
     * @param work what to run in the transaction
     * @param <T> its result
     * @param <X> its checked exception
     * @return what {@code work} returned
     * @throws X what {@code work} threw
     */
    <T, X extends Exception> T inTransaction(TxWork<C, T, X> work) throws X;

    /**
     * Whether a failure of {@link #inTransaction} means the database aborted the transaction to
     * resolve a conflict (a serialization failure, a deadlock, a cluster's certification failure at
     * commit), so that running the whole transaction again may succeed. The default recognises a
     * {@link TransactionConflictException} in the cause chain.
     *
     * @param failure what {@link #inTransaction} threw
     * @return whether retrying the whole transaction may succeed
     */
    default boolean isRetryable(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof TransactionConflictException) {
                return true;
            }
        }
        return false;
    }
}
