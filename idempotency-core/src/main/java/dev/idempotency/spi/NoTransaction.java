package dev.idempotency.spi;

import dev.idempotency.TxWork;

/**
 * The transaction type of a store that has none: a {@link LeaseOnlyStore} (Redis, DynamoDB), whose
 * every primitive is one atomic operation on the server, applied at once. There is nothing to begin,
 * commit or roll back, and nothing a caller's business change could share: such a store serves
 * lease mode alone. Its one value, {@link #NONE}, is what the engine hands the store's primitives
 * and the phases of lease mode ({@link dev.idempotency.Phases}) in place of a transaction.
 *
 * <pre>{@code
 * LeasedIdempotency<NoTransaction> leased = LeasedIdempotency.of(leaseOnlyStore); // over NoTransaction.runner()
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public final class NoTransaction {

    /** The one value: no transaction. */
    public static final NoTransaction NONE = new NoTransaction();

    private static final TransactionRunner<NoTransaction> RUNNER = new TransactionRunner<>() {
        @Override
        public <T, X extends Exception> T inTransaction(TxWork<NoTransaction, T, X> work) throws X {
            return work.apply(NONE);
        }

        @Override
        public String toString() {
            return "NoTransaction.runner()";
        }
    };

    private NoTransaction() {
    }

    /**
     * The runner of {@link dev.idempotency.LeasedIdempotency} over a store without transactions:
     * it runs the work with {@link #NONE} and returns what it returns, or throws what it throws.
     * Nothing is rolled back on a failure, since nothing is held open: each store primitive the work
     * called has already taken effect on the server. Thread-safe.
     *
     * @return the runner
     */
    public static TransactionRunner<NoTransaction> runner() {
        return RUNNER;
    }

    @Override
    public String toString() {
        return "NoTransaction.NONE";
    }
}
