package dev.idempotency.spi;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * A store of {@code C} seen as a store of {@code D} ({@link StoreAdapters}): the one place where each
 * primitive of {@link TransactionalStore}, and {@link IdempotencyStore#heardBy}, is forwarded. Immutable; as thread-safe as the store and the
 * adapter.
 *
 * @param <D> the caller's transaction type
 * @param <C> the store's transaction type
 */
class AdaptedStore<D, C> implements TransactionalStore<D> {

    private final TransactionalStore<C> store;
    final TransactionAdapter<D, C> adapter;

    AdaptedStore(TransactionalStore<C> store, TransactionAdapter<D, C> adapter) {
        this.store = store;
        this.adapter = adapter;
    }

    /** The store's transaction in {@code tx}, or the adapter's refusal, before anything is written. */
    final C tx(D tx, @Nullable IdempotencyKey key) {
        return Objects.requireNonNull(adapter.inner(Objects.requireNonNull(tx, "tx"), key), "the adapter returned no transaction");
    }

    /** The key a batch names in a refusal: its first. */
    private static <T> @Nullable IdempotencyKey first(List<T> batch, Function<T, IdempotencyKey> key) {
        return batch.isEmpty() ? null : key.apply(batch.get(0));
    }

    /** The store's answer, adapted in turn: this store if the store reports nothing. */
    @Override
    public TransactionalStore<D> heardBy(IdempotencyListener listener) {
        TransactionalStore<C> heard = store.heardBy(listener);
        return heard == store ? this : StoreAdapters.adapt(heard, adapter);
    }

    @Override
    public void checkTransaction(D tx, IdempotencyKey key) {
        store.checkTransaction(tx(tx, key), key);
    }

    @Override
    public Claim claim(D tx, ClaimRequest request) {
        return store.claim(tx(tx, request.key()), request);
    }

    @Override
    public List<Claim> claimAll(D tx, List<ClaimRequest> requests) {
        return store.claimAll(tx(tx, first(requests, ClaimRequest::key)), requests);
    }

    @Override
    public void completeAll(D tx, List<Completion> completions) {
        store.completeAll(tx(tx, first(completions, Completion::key)), completions);
    }

    @Override
    public void complete(D tx, Completion completion) {
        store.complete(tx(tx, completion.key()), completion);
    }

    @Override
    public Claim writeLast(D tx, ClaimRequest request, Completion completion) {
        return store.writeLast(tx(tx, request.key()), request, completion);
    }

    @Override
    public void release(D tx, IdempotencyKey key) {
        store.release(tx(tx, key), key);
    }

    @Override
    public TxSavepoint savepoint(D tx) {
        return store.savepoint(tx(tx, null));
    }

    @Override
    public int purgeExpired(D tx, Instant now, int limit) {
        return store.purgeExpired(tx(tx, null), now, limit);
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + store + " through " + adapter + "]";
    }
}
