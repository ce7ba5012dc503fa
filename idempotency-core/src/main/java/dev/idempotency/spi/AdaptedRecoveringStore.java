package dev.idempotency.spi;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.List;

/**
 * A recovering store of {@code C} seen as one of {@code D} ({@link StoreAdapters}): the one place
 * where each primitive of {@link RecoveringStore} is forwarded; the transactional ones are
 * {@link AdaptedStore}'s. Immutable; as thread-safe as the store and the adapter.
 *
 * @param <D> the caller's transaction type
 * @param <C> the store's transaction type
 */
final class AdaptedRecoveringStore<D, C> extends AdaptedStore<D, C> implements TransactionalRecoveringStore<D> {

    private final TransactionalRecoveringStore<C> store;

    AdaptedRecoveringStore(TransactionalRecoveringStore<C> store, TransactionAdapter<D, C> adapter) {
        super(store, adapter);
        this.store = store;
    }

    @Override
    public TransactionalRecoveringStore<D> heardBy(IdempotencyListener listener) {
        TransactionalRecoveringStore<C> heard = store.heardBy(listener);
        return heard == store ? this : StoreAdapters.adapt(heard, adapter);
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
    @Override
    public boolean enlist(D tx, IdempotencyKey key, String ownerToken, String operation) {
        return store.enlist(tx(tx, key), key, ownerToken, operation);
    }

    @Override
    public void delist(D tx, IdempotencyKey key) {
        store.delist(tx(tx, key), key);
    }

    @Override
    public List<PendingOperation> pending(D tx, IdempotencyKey after, int limit) {
        return store.pending(tx(tx, after), after, limit);
    }
}
