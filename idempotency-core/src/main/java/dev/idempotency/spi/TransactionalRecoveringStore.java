package dev.idempotency.spi;

import dev.idempotency.IdempotencyListener;

/**
 * A store with every capability: it writes the key's record in the caller's own transaction
 * ({@link TransactionalStore}), keeps leases and lists the named operations in progress
 * ({@link RecoveringStore}), all over one transaction type; the JDBC store is one. One store then
 * serves every engine: {@link dev.idempotency.Idempotency}, {@link dev.idempotency.ManagedIdempotency},
 * {@link dev.idempotency.LeasedIdempotency} and a {@link dev.idempotency.RecoveryWorker}.
 *
 * <p>Transactional claims and purges meet the records that the lease primitives wrote, and judge
 * them by the store's own clock (the clock rule of {@link IdempotencyStore}).
 *
 * @param <C> the transaction type
 */
public interface TransactionalRecoveringStore<C> extends TransactionalStore<C>, RecoveringStore<C> {

    /**
     * {@inheritDoc}
     *
     * @return a store of every capability that reports to {@code listener}; {@code this} if there is
     *     nothing to report
     */
    @Override
    default TransactionalRecoveringStore<C> heardBy(IdempotencyListener listener) {
        return this;
    }
}
