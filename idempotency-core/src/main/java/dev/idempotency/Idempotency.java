package dev.idempotency;

import dev.idempotency.spi.Claim;
import dev.idempotency.spi.TransactionalStore;
import java.time.InstantSource;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The engine: runs a piece of work at most once per key, with the key's record checked and written
 * inside the caller's own transaction, atomically with the work's business change.
 *
 * <p>Protocol of {@code execute(call, tx, work)} in transactional mode:
 * <ol>
 *   <li>Validate the key against the {@link KeyPolicy}; an invalid key throws
 *       {@link InvalidKeyException} before any database access.</li>
 *   <li>Check the transaction ({@link TransactionalStore#checkTransaction}): an auto-commit or closed
 *       connection throws {@link TransactionRequiredException}; nothing is written.</li>
 *   <li>Claim the key in {@code tx} ({@link TransactionalStore#claim}). A committed, unexpired record
 *       with another fingerprint gives {@link Outcome.Mismatch}; with the same fingerprint, its
 *       result gives {@link Outcome.Replayed} (or its recorded final failure, {@link Outcome.Failed}).
 *       A record in progress that this transaction's own running work claimed (the work called
 *       execute again with its own key and fingerprint) throws {@link NestedKeyException}. A
 *       committed record still in progress, which only a work that ended its caller's
 *       transaction leaves behind, throws {@link AbandonedClaimException}.
 *       Another open transaction holding the key is waited for, up to the policy's lock timeout:
 *       if it commits, its result is replayed; if it rolls back, this attempt claims the key; if
 *       the wait runs out, {@link Outcome.InProgress}. In none of these cases does the work run.</li>
 *   <li>Run the work, which must leave {@code tx} to the caller (see {@link Work}): it must not
 *       commit, roll back, close or switch auto-commit. When it returns, the transaction is checked
 *       again ({@link TransactionalStore#checkTransaction}); if the work ended it, the result is not
 *       recorded and {@link AbandonedClaimException} is thrown. If the work throws, the claim is
 *       released and the exception reaches the caller unchanged: nothing is recorded, the caller
 *       rolls back, and a retry runs the work again.
 *       The claim is released on every other failure too (a result that cannot be encoded or is
 *       too large, a store failure), so that no key stays in progress even if the caller commits.
 *       If the policy declares the exception final, the work's writes are instead undone to a
 *       savepoint taken before it ran, the failure is recorded, and {@link Outcome.Failed} is
 *       returned.</li>
 *   <li>Encode the result with the codec, check its size against the policy, record it in
 *       {@code tx} ({@link TransactionalStore#complete}) and return {@link Outcome.Executed}.</li>
 * </ol>
 * The caller commits or rolls back; the engine never does either. Commit: the business change and
 * the record both exist. Roll back or crash: neither does, and a retry is safe. Since the engine
 * cannot see that commit, its {@link IdempotencyListener} hears the outcome when {@code execute}
 * returns, before the caller commits (a chunk's outcomes, one by one, when {@code executeChunk}
 * returns); {@link ManagedIdempotency}, which commits, reports after its commit.
 *
 * <p>The state of {@code tx} after each outcome: after {@code Executed}, {@code Replayed},
 * {@code Mismatch} and {@code Failed}, no statement of the library has failed and the transaction
 * is usable: commit it (a replay and a mismatch wrote nothing). After {@code InProgress} the
 * database may have aborted the transaction while it waited (PostgreSQL does): roll it back.
 * After an exception, roll back.
 *
 * <p>Instances are immutable and thread-safe: build one and share it.
 *
 * @param <C> the transaction type of the store
 */
public final class Idempotency<C> {

    private final Kernel<C> kernel;
    private final TransactionalStore<C> store;
    /** The store as the builder was given it, before {@link TransactionalStore#heardBy}. */
    private final TransactionalStore<C> given;
    private final IdempotencyListener listener;
    private final InstantSource clock;
    private final TransactionalProtocol<C> transactional;

    private Idempotency(Builder<C> b) {
        this.store = Objects.requireNonNull(b.store.heardBy(b.listener), "store.heardBy returned no store");
        this.kernel = b.kernelOver(store);
        this.given = b.store;
        this.listener = b.listener;
        this.clock = b.clock;
        this.transactional = new TransactionalProtocol<>(kernel, store);
    }

    /**
     * @param store where records live: a store that writes them in the caller's transaction (a
     *     {@link dev.idempotency.spi.LeaseOnlyStore} is not one: it takes {@link LeasedIdempotency})
     * @param <C> the store's transaction type
     * @return a builder with the default policy, the system clock and no listener
     */
    public static <C> Builder<C> builder(TransactionalStore<C> store) {
        return new Builder<>(store);
    }

    /**
     * @param store where records live: a store that writes them in the caller's transaction
     * @param <C> the store's transaction type
     * @return an engine with the default policy, the system clock and no listener
     */
    public static <C> Idempotency<C> of(TransactionalStore<C> store) {
        return builder(store).build();
    }

    /**
     * Runs {@code work} at most once for the call's key, in the caller's transaction {@code tx}
     * (the protocol above): with the call's request fingerprint, so that the same key with another
     * fingerprint gives {@link Outcome.Mismatch}, and its codec, or one chosen by the result's type
     * (see {@link IdempotentCall}). A record written by another codec than the call's (another
     * result type or format) is refused with a {@link ResultCodecException} naming the recorded
     * codec and what this call expects.
     *
     * @param call the key, fingerprint and codec
     * @param tx the caller's open transaction
     * @param work the business change
     * @param <T> the result type
     * @param <X> the work's checked exception
     * @return the outcome; never {@code null}
     * @throws X the work's own exception, unchanged
     * @throws InvalidKeyException if the policy refuses the key
     * @throws TransactionRequiredException if {@code tx} cannot carry the record atomically
     * @throws AbandonedClaimException if the work ended {@code tx}, or an earlier work left the key's claim committed
     *     without its result
     * @throws NestedKeyException if the key's own work, running in {@code tx}, calls it again
     * @throws ResultCodecException if the result cannot be encoded (no built-in codec fits it), or a replay cannot be
     *     decoded
     * @throws ResultTooLargeException if the encoded result is over the policy's limit
     * @throws IdempotencyStoreException if the store fails
     */
    public <T, X extends Exception> Outcome<T> execute(IdempotentCall<T> call, C tx, Work<T, X> work) throws X {
        Objects.requireNonNull(call, "call");
        return attempt(call.key(), call.fingerprint(), tx, call.codecOrNull(), work);
    }

    /**
     * The first steps of {@link #execute(IdempotentCall, Object, Work)} in the caller's open
     * transaction {@code tx}, for a caller that runs the work itself between two steps (see
     * {@link PendingCall}): validate the key, check the transaction, claim the key. A record found
     * answers as {@code execute} would ({@link PendingCall#answer()}); a claimed key waits for the
     * caller's work and its {@link PendingCall#complete}, in the same transaction. No final failure
     * is recorded in this form: a work that fails is rolled back with the claim.
     *
     * @param call the key, fingerprint and codec
     * @param tx the caller's open transaction, which must stay open until {@code complete}
     * @param <T> the result type
     * @return the pending call; never {@code null}
     * @throws InvalidKeyException if the policy refuses the key
     * @throws TransactionRequiredException if {@code tx} cannot carry the record atomically
     * @throws AbandonedClaimException if an earlier work left the key's claim committed without its result
     * @throws ResultCodecException if a replay cannot be decoded
     * @throws IdempotencyStoreException if the store fails
     */
    public <T> PendingCall<T> begin(IdempotentCall<T> call, C tx) {
        Objects.requireNonNull(call, "call");
        Objects.requireNonNull(tx, "tx");
        kernel.policy().validate(call.key());
        return transactional.begin(call.key(), call.fingerprint(), tx, call.codecOrNull());
    }

    /**
     * The shortcut of {@link #execute(IdempotentCall, Object, Work)} for
     * {@code IdempotentCall.of(key)}: no fingerprint, a built-in codec chosen by the result's type.
     *
     * @param key the key
     * @param tx the caller's open transaction
     * @param work the business change
     * @param <T> the result type: {@code String}, {@code byte[]}, {@code Integer}, {@code Long},
     *     {@code Boolean}, {@code UUID} or {@code null}; others need a codec
     * @param <X> the work's checked exception
     * @return the outcome; never {@code null}
     * @throws X the work's own exception, unchanged
     * @throws InvalidKeyException if the policy refuses the key
     * @throws TransactionRequiredException if {@code tx} cannot carry the record atomically
     * @throws AbandonedClaimException if the work ended {@code tx}, or an earlier work left the key's claim committed
     *     without its result
     * @throws NestedKeyException if the key's own work, running in {@code tx}, calls it again
     * @throws ResultCodecException if no built-in codec fits the result, or a replay cannot be decoded
     * @throws ResultTooLargeException if the encoded result is over the policy's limit
     * @throws IdempotencyStoreException if the store fails
     */
    public <T, X extends Exception> Outcome<T> execute(IdempotencyKey key, C tx, Work<T, X> work) throws X {
        return attempt(key, Fingerprint.NONE, tx, null, work);
    }

    /**
     * Deletes at most {@code limit} expired records in {@code tx}; the caller commits. Run it in
     * short transactions of its own, repeatedly, until it returns less than {@code limit}.
     *
     * @param tx a transaction of the caller's, used for the delete only
     * @param limit the batch size, at least 1
     * @return the number of records deleted
     * @throws IllegalArgumentException if {@code limit} is less than 1
     * @throws IdempotencyStoreException if the store fails
     */
    public int purgeExpired(C tx, int limit) {
        Objects.requireNonNull(tx, "tx");
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, was " + limit);
        }
        return store.purgeExpired(tx, clock.instant(), limit);
    }

    /**
     * Tells the engine's listener why a duplicate that was replayed arrived
     * ({@link IdempotencyListener#onDuplicate}), for an adapter that can tell it, such as a message
     * consumer; a listener that throws is logged and ignored, as for every callback. Thread-safe.
     *
     * @param key the key of the replayed outcome
     * @param cause a short, stable name of the cause, chosen by the adapter
     * @throws NullPointerException if {@code key} or {@code cause} is null
     */
    public void reportDuplicate(IdempotencyKey key, String cause) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(cause, "cause");
        kernel.heard().duplicate(key, cause);
    }

    /** @return the key policy, as given to {@link Builder#keyPolicy(KeyPolicy)} */
    public KeyPolicy keyPolicy() {
        return kernel.policy();
    }

    /**
     * @return the store the engine uses: the one given to the builder as
     *     {@link TransactionalStore#heardBy} returned it for this engine's listener (for the JDBC store,
     *     a copy that reports to that listener)
     */
    public TransactionalStore<C> store() {
        return store;
    }

    /** Whether {@code candidate} is this engine's store: the one given to the builder, or the copy it uses. */
    boolean isOver(Object candidate) {
        return candidate == given || candidate == store;
    }

    IdempotencyListener listener() {
        return listener;
    }

    private <T, X extends Exception> Outcome<T> attempt(IdempotencyKey key, Fingerprint fingerprint, C tx,
                                                        @Nullable ResultCodec<T> codec, Work<T, X> work) throws X {
        Objects.requireNonNull(key, "key");
        return kernel.heard().single(key, () -> {
            kernel.policy().validate(key);
            Objects.requireNonNull(tx, "tx");
            Objects.requireNonNull(work, "work");
            return transactional.attempt(key, fingerprint, tx, codec, work, Kernel.CLAIM_RELEASED, FinalUndo.SAVEPOINT);
        });
    }

    /**
     * Runs a chunk of items in the caller's transaction, each at most once for its own key, with one
     * claim for the whole chunk and one batched recording of every result (where the store can: the
     * JDBC store claims a chunk in one {@code SELECT} and one multi-row {@code INSERT}, and records it
     * in one JDBC batch). Protocol:
     * <ol>
     *   <li>Validate every key; a key that appears twice in the chunk throws
     *       {@link DuplicateKeyInChunkException}. Nothing is read or written before.</li>
     *   <li>Check the transaction, then claim every key ({@link TransactionalStore#claimAll}) in a fixed
     *       order (by scope, then id), so that two workers whose chunks overlap wait for each other
     *       instead of deadlocking.</li>
     *   <li>For each item, in input order: a record found gives its outcome as in
     *       {@link #execute(IdempotentCall, Object, Work)} (replay, mismatch,
     *       recorded failure) without running the work; a key held by another transaction past the lock
     *       timeout gives {@link Outcome.InProgress}; a claimed key runs the work.</li>
     *   <li>A final failure (per the key policy) of one item's work is undone to a savepoint taken
     *       before that item and recorded for that item alone; the chunk goes on. (In the caller's
     *       transaction a savepoint is taken around every item once the policy declares final
     *       failures; {@link ManagedIdempotency#executeChunk}, which owns its transaction, takes them
     *       only when it runs a chunk again after a final failure.) Any other exception
     *       releases every claim of the chunk and reaches the caller unchanged: roll the chunk back.</li>
     *   <li>Record every result and final failure in one batch ({@link TransactionalStore#completeAll}),
     *       and return one outcome per item, in input order.</li>
     * </ol>
     * The caller commits or rolls back, as with {@code execute}. The listener hears one
     * {@code onOutcome} per item when this returns, or one {@code onError} (with the first item's
     * key) for the exception thrown.
     *
     * @param tx the caller's open transaction
     * @param items the chunk's items; at most a few thousand
     * @param callOf the call of an item: its key, its fingerprint (or none) and its codec (or none, to
     *     choose a built-in one by the result's type), e.g. {@code item -> IdempotentCall.of(item.key(), codec)}
     * @param work the business change for one item
     * @param <I> the item type
     * @param <T> the result type
     * @param <X> the work's checked exception
     * @return one outcome per item, in input order
     * @throws X an item's own exception, unchanged (every claim of the chunk was released)
     * @throws InvalidKeyException if the policy refuses an item's key
     * @throws DuplicateKeyInChunkException if two items have the same key
     * @throws TransactionRequiredException if {@code tx} cannot carry the records atomically
     * @throws ResultCodecException if a result cannot be encoded, or a replay cannot be decoded
     * @throws ResultTooLargeException if an encoded result is over the policy's limit
     * @throws IdempotencyStoreException if the store fails
     */
    public <I, T, X extends Exception> List<Outcome<T>> executeChunk(C tx, List<? extends I> items,
            Function<? super I, IdempotentCall<T>> callOf, ItemWork<? super I, T, X> work) throws X {
        return kernel.heard().chunk(items, ChunkProtocol.keys(callOf),
                () -> ChunkProtocol.execute(kernel, store, tx, items, callOf, work, Kernel.CLAIM_RELEASED, FinalUndo.SAVEPOINT));
    }

    // ---- shared with ManagedIdempotency, which runs the same protocols in transactions of its own ----

    /** The steps every mode shares, over this engine's store, policy, clock and listener. */
    Kernel<C> kernel() {
        return kernel;
    }

    /** Transactional mode's protocol, which {@link ManagedIdempotency} runs in its own transactions. */
    TransactionalProtocol<C> transactional() {
        return transactional;
    }

    @Override
    public String toString() {
        return "Idempotency[" + kernel + "]";
    }

    /**
     * Builds an {@link Idempotency}. Not thread-safe; the engine it builds is.
     *
     * @param <C> the store's transaction type
     */
    public static final class Builder<C> extends EngineBuilder<Builder<C>> {
        private final TransactionalStore<C> store;

        private Builder(TransactionalStore<C> store) {
            this.store = Objects.requireNonNull(store, "store");
        }

        /** @return the engine */
        public Idempotency<C> build() {
            return new Idempotency<>(this);
        }
    }
}
