package dev.idempotency.spi;

import java.util.Objects;

/**
 * Adapts a store to another transaction type: the store of {@code C}, seen through a
 * {@link TransactionAdapter} from {@code D} to {@code C}, is a store of {@code D}. Every primitive of
 * {@link TransactionalStore} and, for a {@link TransactionalRecoveringStore}, of
 * {@link RecoveringStore}, the default ones included (so that the store's own batched
 * {@code claimAll}, {@code completeAll} and {@code writeLast} still run), is forwarded with the
 * adapted transaction, after the adapter has had the chance to refuse it;
 * {@link IdempotencyStore#heardBy} is forwarded too, and the store it returns adapted in turn.
 *
 * <p>The adapted store keeps the store's capabilities: adapting a {@link TransactionalRecoveringStore}
 * gives one, so that every engine takes it as it would the store. Its {@code toString} names the
 * store and the adapter.
 *
 * <pre>{@code
 * TransactionalRecoveringStore<Handle> jdbi = StoreAdapters.adapt(jdbcStore, (handle, key) -> handle.getConnection());
 * }</pre>
 *
 * <p>Stateless and thread-safe; an adapted store is immutable, and as thread-safe as the store and
 * the adapter it is made of.
 */
public final class StoreAdapters {

    private StoreAdapters() {
    }

    /**
     * @param store the store that does the work
     * @param adapter finds the store's transaction in the caller's, or refuses it
     * @param <D> the caller's transaction type
     * @param <C> the store's transaction type
     * @return a transactional store of {@code D}; a {@link TransactionalRecoveringStore} if {@code store} is one
     */
    public static <D, C> TransactionalStore<D> adapt(TransactionalStore<C> store, TransactionAdapter<D, C> adapter) {
        Objects.requireNonNull(store, "store");
        Objects.requireNonNull(adapter, "adapter");
        if (store instanceof TransactionalRecoveringStore<C> every) {
            return new AdaptedRecoveringStore<>(every, adapter);
        }
        return new AdaptedStore<>(store, adapter);
    }

    /**
     * @param store the store that does the work
     * @param adapter finds the store's transaction in the caller's, or refuses it
     * @param <D> the caller's transaction type
     * @param <C> the store's transaction type
     * @return a store of {@code D} with every capability
     */
    public static <D, C> TransactionalRecoveringStore<D> adapt(TransactionalRecoveringStore<C> store, TransactionAdapter<D, C> adapter) {
        return (TransactionalRecoveringStore<D>) adapt((TransactionalStore<C>) store, adapter);
    }
}
