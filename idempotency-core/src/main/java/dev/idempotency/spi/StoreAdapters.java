package dev.idempotency.spi;

import java.util.Objects;

/**
 * Adapts a store to another transaction type: the store of {@code C}, seen through a
 * {@link TransactionAdapter} from {@code D} to {@code C}, is a store of {@code D}. Every primitive of
 * {@link IdempotencyStore} and {@link LeasingStore}, the default ones included (so that the store's
 * own batched {@code claimAll}, {@code completeAll} and {@code writeLast} still run), is forwarded
 * with the adapted transaction, after the adapter has had the chance to refuse it;
 * {@link IdempotencyStore#heardBy} is forwarded too, and the store it returns adapted in turn.
 *
 * <p>The adapted store keeps the store's shape: it is a {@link LeasingStore} if, and only if, the
 * store is one (whichever overload is called), so that lease mode runs on it or refuses it as it
 * would the store. Its {@code toString} names the store and the adapter.
 *
 * <pre>{@code
 * LeasingStore<Handle> jdbi = StoreAdapters.adapt(jdbcStore, (handle, key) -> handle.getConnection());
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
     * @return a store of {@code D}; a {@link LeasingStore} if {@code store} is one
     */
    public static <D, C> IdempotencyStore<D> adapt(IdempotencyStore<C> store, TransactionAdapter<D, C> adapter) {
        Objects.requireNonNull(store, "store");
        Objects.requireNonNull(adapter, "adapter");
        if (store instanceof RecoveringStore<C> recovering) {
            return new AdaptedRecoveringStore<>(recovering, adapter);
        }
        if (store instanceof LeasingStore<C> leasing) {
            return new AdaptedLeasingStore<>(leasing, adapter);
        }
        return new AdaptedStore<>(store, adapter);
    }

    /**
     * As {@link #adapt(IdempotencyStore, TransactionAdapter)}, typed for a store that keeps leases.
     *
     * @param store the store that does the work
     * @param adapter finds the store's transaction in the caller's, or refuses it
     * @param <D> the caller's transaction type
     * @param <C> the store's transaction type
     * @return a leasing store of {@code D}
     */
    public static <D, C> LeasingStore<D> adapt(LeasingStore<C> store, TransactionAdapter<D, C> adapter) {
        return (LeasingStore<D>) adapt((IdempotencyStore<C>) store, adapter);
    }
}
