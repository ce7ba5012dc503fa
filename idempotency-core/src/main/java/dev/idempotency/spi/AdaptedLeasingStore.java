package dev.idempotency.spi;

import dev.idempotency.IdempotencyKey;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * A leasing store of {@code C} seen as one of {@code D} ({@link StoreAdapters}): the one place where
 * each lease primitive of {@link LeasingStore} is forwarded; the others are {@link AdaptedStore}'s.
 * Immutable; as thread-safe as the store and the adapter.
 *
 * @param <D> the caller's transaction type
 * @param <C> the store's transaction type
 */
class AdaptedLeasingStore<D, C> extends AdaptedStore<D, C> implements LeasingStore<D> {

    private final LeasingStore<C> store;

    AdaptedLeasingStore(LeasingStore<C> store, TransactionAdapter<D, C> adapter) {
        super(store, adapter);
        this.store = store;
    }

    @Override
    public LeaseClaim claimLease(D tx, LeaseRequest request) {
        return store.claimLease(tx(tx, request.key()), request);
    }

    @Override
    public Optional<Instant> extendLease(D tx, IdempotencyKey key, String ownerToken, Duration lease) {
        return store.extendLease(tx(tx, key), key, ownerToken, lease);
    }

    @Override
    public boolean checkpoint(D tx, IdempotencyKey key, String ownerToken, RecoveryPoint point) {
        return store.checkpoint(tx(tx, key), key, ownerToken, point);
    }

    @Override
    public Optional<Instant> completeLeased(D tx, String ownerToken, LeasedCompletion completion) {
        return store.completeLeased(tx(tx, completion.key()), ownerToken, completion);
    }

    @Override
    public boolean releaseLease(D tx, IdempotencyKey key, String ownerToken) {
        return store.releaseLease(tx(tx, key), key, ownerToken);
    }
}
