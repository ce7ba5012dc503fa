package dev.idempotency.spi;

import dev.idempotency.IdempotencyKey;
import java.util.List;

/**
 * A recovering store of {@code C} seen as one of {@code D} ({@link StoreAdapters}): the one place
 * where each primitive of {@link RecoveringStore} is forwarded; the others are
 * {@link AdaptedLeasingStore}'s. Immutable; as thread-safe as the store and the adapter.
 *
 * @param <D> the caller's transaction type
 * @param <C> the store's transaction type
 */
final class AdaptedRecoveringStore<D, C> extends AdaptedLeasingStore<D, C> implements RecoveringStore<D> {

    private final RecoveringStore<C> store;

    AdaptedRecoveringStore(RecoveringStore<C> store, TransactionAdapter<D, C> adapter) {
        super(store, adapter);
        this.store = store;
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
