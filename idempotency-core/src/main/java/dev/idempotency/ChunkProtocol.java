package dev.idempotency;

import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.TransactionalStore;
import dev.idempotency.spi.TxSavepoint;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The chunk protocol of {@link Idempotency#executeChunk} (its steps are listed there), in the
 * caller's transaction or one that {@link ManagedIdempotency} runs; {@code aftermath} says what a
 * result that cannot be recorded leaves, true for the mode that runs it, and {@link FinalUndo} how an
 * item's final failure is undone ({@link FinalUndo#TRANSACTION}: the chunk runs again with a
 * savepoint per item). The listener is told by the caller of this class. Stateless.
 */
final class ChunkProtocol {

    private static final Comparator<IdempotencyKey> KEY_ORDER =
            Comparator.comparing(IdempotencyKey::scope).thenComparing(IdempotencyKey::id);

    private ChunkProtocol() {
    }

    /**
     * @return the key of an item by {@code callOf}, for the listener's report of a chunk's failure;
     *     {@code null} if {@code callOf} is
     */
    static <I> @Nullable Function<I, IdempotencyKey> keys(@Nullable Function<? super I, ? extends IdempotentCall<?>> callOf) {
        return callOf == null ? null : item -> callOf.apply(item).key();
    }

    static <C, I, T, X extends Exception> List<Outcome<T>> execute(Kernel<C> kernel, TransactionalStore<C> store, C tx, List<? extends I> items,
            Function<? super I, IdempotentCall<T>> callOf, ItemWork<? super I, T, X> work, String aftermath, FinalUndo undo) throws X {
        Objects.requireNonNull(tx, "tx");
        Objects.requireNonNull(items, "items");
        Objects.requireNonNull(callOf, "callOf");
        Objects.requireNonNull(work, "work");
        Objects.requireNonNull(undo, "undo");
        int n = items.size();
        if (n == 0) {
            return List.of();
        }
        KeyPolicy policy = kernel.policy();
        IdempotencyKey[] keys = new IdempotencyKey[n];
        Fingerprint[] fingerprints = new Fingerprint[n];
        List<ResultCodec<T>> codecs = new ArrayList<>(n);
        Map<IdempotencyKey, Integer> seen = new HashMap<>();
        for (int i = 0; i < n; i++) {
            I item = Objects.requireNonNull(items.get(i), "items[" + i + "]");
            IdempotentCall<T> call = Objects.requireNonNull(callOf.apply(item), "the call of items[" + i + "]");
            keys[i] = policy.validate(call.key());
            fingerprints[i] = call.fingerprint();
            codecs.add(call.codecOrNull());
            Integer earlier = seen.putIfAbsent(keys[i], i);
            if (earlier != null) {
                throw new DuplicateKeyInChunkException(keys[i], earlier, i);
            }
        }
        store.checkTransaction(tx, keys[0]);
        Integer[] order = new Integer[n];
        Arrays.setAll(order, i -> i);
        Arrays.sort(order, (a, b) -> KEY_ORDER.compare(keys[a], keys[b]));
        Instant now = kernel.now();
        List<ClaimRequest> requests = new ArrayList<>(n);
        for (int i : order) {
            requests.add(kernel.claimRequest(keys[i], fingerprints[i], now));
        }
        List<Claim> sorted = store.claimAll(tx, requests);
        if (sorted.size() != n) {
            throw new IdempotencyStoreException(keys[0], "the store answered " + sorted.size() + " claims for a chunk of " + n, null);
        }
        Claim[] claims = new Claim[n];
        for (int k = 0; k < n; k++) {
            claims[order[k]] = sorted.get(k);
        }
        List<Outcome<T>> outcomes = new ArrayList<>(n);
        List<Completion> completions = new ArrayList<>();
        List<IdempotencyKey> claimed = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            if (claims[i] instanceof Claim.Acquired) {
                claimed.add(keys[i]);
            }
        }
        try {
            for (int i = 0; i < n; i++) {
                Claim claim = claims[i];
                if (claim instanceof Claim.Acquired) {
                    outcomes.add(runItem(kernel, store, tx, items.get(i), keys[i], codecs.get(i), work, completions, aftermath, undo));
                } else {
                    outcomes.add(kernel.outcomeOf(keys[i], fingerprints[i], codecs.get(i), claim));
                }
            }
            store.completeAll(tx, completions);
        } catch (Throwable failure) {
            if (failure instanceof FinalFailure) {
                throw failure; // the transaction is rolled back whole: nothing to release
            }
            for (IdempotencyKey key : claimed) {
                TransactionalProtocol.release(store, tx, key, failure);
            }
            throw failure;
        }
        return outcomes;
    }

    private static <C, I, T, X extends Exception> Outcome<T> runItem(Kernel<C> kernel, TransactionalStore<C> store, C tx, I item, IdempotencyKey key,
            ResultCodec<T> codec, ItemWork<? super I, T, X> work, List<Completion> completions, String aftermath, FinalUndo undo)
            throws X {
        TxSavepoint savepoint = undo == FinalUndo.SAVEPOINT && kernel.hasFinalFailures() ? store.savepoint(tx) : null;
        T value;
        try {
            value = work.apply(item);
        } catch (Exception failure) {
            if (!kernel.hasFinalFailures() || !kernel.isFinal(failure)) {
                throw failure;
            }
            if (savepoint == null) {
                throw new FinalFailure(null); // run again with a savepoint per item
            }
            savepoint.rollback();
            return recorded(kernel.failed(key, failure), completions);
        }
        if (savepoint != null) {
            savepoint.release();
        }
        return recorded(kernel.executed(key, codec, value, aftermath), completions);
    }

    private static <T> Outcome<T> recorded(Kernel.Recorded<T> recorded, List<Completion> completions) {
        completions.add(recorded.completion());
        return recorded.outcome();
    }
}
