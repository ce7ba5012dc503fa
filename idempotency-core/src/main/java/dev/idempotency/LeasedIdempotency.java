package dev.idempotency;

import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.LeaseOnlyStore;
import dev.idempotency.spi.LeasingStore;
import dev.idempotency.spi.NoTransaction;
import dev.idempotency.spi.RecoveringStore;
import dev.idempotency.spi.TransactionRunner;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The engine of lease mode, for work with effects outside the database: the key is claimed under a
 * lease in a short transaction of the engine's own, the call runs outside any transaction, and its
 * result is recorded fenced by the attempt's owner token. It takes a {@link LeasingStore}: a store
 * without transactions ({@link #of(LeaseOnlyStore)}: Redis, DynamoDB), or a database store with
 * the {@link TransactionRunner} that begins and ends its transactions
 * ({@link #builder(LeasingStore, TransactionRunner)}: the JDBC store over a {@code DataSource}), or
 * one that shares the settings, records and transactions of the {@link ManagedIdempotency} over
 * the same store ({@link #of(ManagedIdempotency, LeasingStore)}).
 *
 * <p>Protocol of lease mode ({@link #lease}, {@link #run}), for an operation in phases (see
 * {@link Phases}):
 * <ol>
 *   <li>Validate the key; an invalid key throws {@link InvalidKeyException} before any access.</li>
 *   <li>In a short transaction of the engine's own, claim the key under a lease with a fresh random
 *       owner token (128 bits), judged by the store's clock ({@link LeasingStore#claimLease}). A
 *       completed record replays (or is a mismatch); a live lease of another attempt gives
 *       {@link Outcome.InProgress} with the lease's end and its remaining time by the store's clock,
 *       after polling for up to
 *       {@link LeasePolicy#waitForHolder()}; a lease that ended is taken over, counting one more
 *       attempt. In the same transaction, run the <i>prepare</i> phase and record its value as the
 *       recovery point; an attempt that resumes a committed prepare decodes its value instead and
 *       does not run it again. Commit.</li>
 *   <li>Run the <i>call</i> outside any transaction, with a {@link LeaseAttempt}: the attempt number,
 *       the downstream key (the same on every attempt), the lease end, and a way to extend the
 *       lease.</li>
 *   <li>If the call throws a failure that the key policy declares final: in one transaction, run the
 *       final-failure writes and record the failure, fenced by the owner token; return
 *       {@link Outcome.Failed}, replayed to every retry. Any other failure: end the lease at once
 *       ({@link LeasingStore#releaseLease}, keeping the recovery point) so that a retry resumes
 *       without waiting, and rethrow it unchanged.</li>
 *   <li>In one transaction, run the <i>finish</i> phase and record the result, fenced: if another
 *       attempt took the key over meanwhile, the transaction rolls back and
 *       {@link LeaseLostException} is thrown; nothing of this attempt is recorded. Otherwise return
 *       {@link Outcome.Executed}. A finish that throws rolls back, and the lease is ended as in 4. A
 *       result that cannot be recorded (over the policy's size limit, or one its codec fails to
 *       encode) rolls back too, but the call has run: the operation is recorded as failed, fenced, and
 *       {@link ResultTooLargeException} or {@link ResultCodecException} is thrown; every retry gets
 *       {@link Outcome.Failed} back and the call is not run again.</li>
 * </ol>
 * A process that dies anywhere leaves at most a committed claim (and prepare) whose lease ends on
 * its own; the next attempt after that takes it over and resumes. Every short transaction of the
 * engine is retried on conflicts as in transactional mode.
 *
 * <p><b>A store without transactions</b> (a {@link dev.idempotency.spi.LeaseOnlyStore}: Redis,
 * DynamoDB) runs lease mode over {@link dev.idempotency.spi.NoTransaction#runner()}, each primitive
 * atomic on its server; the phases get {@link dev.idempotency.spi.NoTransaction#NONE} for a
 * transaction: {@link #of(LeaseOnlyStore)}. Such a store is no
 * {@link dev.idempotency.spi.TransactionalStore}, so it has no engine of the transactional modes,
 * and this one has no method that such a store cannot serve.
 *
 * <p><b>Named operations</b> ({@link Phases#named}), which a {@link RecoveryWorker} resumes when
 * their client went away, need a store that lists the named operations in progress (a
 * {@link RecoveringStore}: the JDBC store). Over such a store every factory here returns a
 * {@link RecoveringLeasedIdempotency}, which runs them; this class has no method that takes them,
 * so that named phases over a store that lists none do not compile.
 *
 * <p>Instances are immutable and thread-safe: build one and share it.
 *
 * @param <C> the transaction type
 */
public sealed class LeasedIdempotency<C> permits RecoveringLeasedIdempotency {

    private final Kernel<C> kernel;
    private final LeasingStore<C> store;
    private final OwnTransactions<C> transactions;
    private final LeasePolicy leases;
    private final LeaseProtocol<C> leasing;

    LeasedIdempotency(Kernel<C> kernel, LeasingStore<C> store, OwnTransactions<C> transactions, LeasePolicy leases,
                      StoreUnavailablePolicy unavailableStore) {
        this.kernel = kernel;
        this.store = store;
        this.transactions = transactions;
        this.leases = leases;
        this.leasing = new LeaseProtocol<>(kernel, store, transactions, leases, unavailableStore);
    }

    /**
     * @param store a store without transactions, each primitive atomic on its server
     * @return a builder over {@link NoTransaction#runner()}, with the default policies, the system
     *     clock and no listener
     */
    public static Builder<NoTransaction> builder(LeaseOnlyStore store) {
        return new Builder<>(store, NoTransaction.runner());
    }

    /**
     * @param store a store without transactions, each primitive atomic on its server
     * @return an engine over {@link NoTransaction#runner()}, with the default policies, the system
     *     clock and no listener
     */
    public static LeasedIdempotency<NoTransaction> of(LeaseOnlyStore store) {
        return builder(store).build();
    }

    /**
     * For a store with transactions that keeps leases (the JDBC store, which is also a
     * {@link dev.idempotency.spi.TransactionalStore}: the same store serves {@link Idempotency} too).
     *
     * @param store the store
     * @param transactions begins and ends the engine's short transactions, in which the lease
     *     primitives and the phases' own writes run
     * @param <C> the transaction type
     * @return a builder with the default policies, the system clock and no listener
     */
    public static <C> Builder<C> builder(LeasingStore<C> store, TransactionRunner<C> transactions) {
        return new Builder<>(store, transactions);
    }

    /**
     * For a store with transactions that keeps leases and lists the named operations in progress
     * (the JDBC store): the engine it builds runs named phases too.
     *
     * @param store the store
     * @param transactions begins and ends the engine's short transactions, in which the lease
     *     primitives and the phases' own writes run
     * @param <C> the transaction type
     * @return a builder with the default policies, the system clock and no listener
     */
    public static <C> RecoveringLeasedIdempotency.Builder<C> builder(RecoveringStore<C> store, TransactionRunner<C> transactions) {
        return new RecoveringLeasedIdempotency.Builder<>(store, transactions);
    }

    /**
     * @param store the store
     * @param transactions begins and ends the engine's short transactions
     * @param <C> the transaction type
     * @return an engine with the default policies, the system clock and no listener
     */
    public static <C> LeasedIdempotency<C> of(LeasingStore<C> store, TransactionRunner<C> transactions) {
        return builder(store, transactions).build();
    }

    /**
     * @param store the store, which lists the named operations in progress
     * @param transactions begins and ends the engine's short transactions
     * @param <C> the transaction type
     * @return an engine that runs named phases too, with the default policies, the system clock and
     *     no listener
     */
    public static <C> RecoveringLeasedIdempotency<C> of(RecoveringStore<C> store, TransactionRunner<C> transactions) {
        return builder(store, transactions).build();
    }

    /**
     * Lease mode for the store of a {@link ManagedIdempotency}, with the default lease policy: see
     * {@link #of(ManagedIdempotency, LeasingStore, LeasePolicy, StoreUnavailablePolicy)}.
     *
     * @param engine the engine of the transactional modes over {@code store}
     * @param store the engine's store, typed as one that keeps leases
     * @param <C> the transaction type
     * @return the lease-mode engine; build it once and share it
     * @throws IllegalArgumentException if {@code store} is not the store {@code engine} was built over
     */
    public static <C> LeasedIdempotency<C> of(ManagedIdempotency<C> engine, LeasingStore<C> store) {
        return of(engine, store, LeasePolicy.ofDefaults(), StoreUnavailablePolicy.REFUSE);
    }

    /**
     * Lease mode for the store of a {@link ManagedIdempotency}, refusing calls while the store is
     * unreachable: see {@link #of(ManagedIdempotency, LeasingStore, LeasePolicy, StoreUnavailablePolicy)}.
     *
     * @param engine the engine of the transactional modes over {@code store}
     * @param store the engine's store, typed as one that keeps leases
     * @param leases the lease length and what an attempt does on a live lease
     * @param <C> the transaction type
     * @return the lease-mode engine; build it once and share it
     * @throws IllegalArgumentException if {@code store} is not the store {@code engine} was built over
     */
    public static <C> LeasedIdempotency<C> of(ManagedIdempotency<C> engine, LeasingStore<C> store, LeasePolicy leases) {
        return of(engine, store, leases, StoreUnavailablePolicy.REFUSE);
    }

    /**
     * Lease mode for the store of a {@link ManagedIdempotency}, for a store that keeps records in
     * the caller's transaction and leases too (the JDBC store): the engine shares {@code engine}'s
     * key policy, clock, listener, transactions and retry policy, so that both modes see the same
     * records and report to the same listener. Only the settings of lease mode are given here. The
     * store is taken typed as a {@link LeasingStore}: lease mode over a store that keeps no leases
     * does not compile.
     *
     * @param engine the engine of the transactional modes over {@code store}
     * @param store the engine's store (as given to {@link Idempotency#builder}), typed as one that keeps leases
     * @param leases the lease length and what an attempt does on a live lease
     * @param whenUnavailable what a claim that finds the store unreachable does (see
     *     {@link Builder#whenStoreUnavailable(StoreUnavailablePolicy)})
     * @param <C> the transaction type
     * @return the lease-mode engine; build it once and share it
     * @throws IllegalArgumentException if {@code store} is not the store {@code engine} was built over
     */
    public static <C> LeasedIdempotency<C> of(ManagedIdempotency<C> engine, LeasingStore<C> store, LeasePolicy leases,
                                              StoreUnavailablePolicy whenUnavailable) {
        Idempotency<C> shared = shared(engine, store, leases, whenUnavailable);
        return new LeasedIdempotency<>(shared.kernel(), heard(shared, store, LeasingStore.class), engine.ownTransactions(), leases,
                whenUnavailable);
    }

    /**
     * Lease mode for the store of a {@link ManagedIdempotency}, with the default lease policy, for a
     * store that lists the named operations in progress too: see
     * {@link #of(ManagedIdempotency, RecoveringStore, LeasePolicy, StoreUnavailablePolicy)}.
     *
     * @param engine the engine of the transactional modes over {@code store}
     * @param store the engine's store, typed as one that keeps leases and lists the named operations
     * @param <C> the transaction type
     * @return the lease-mode engine, which runs named phases too; build it once and share it
     * @throws IllegalArgumentException if {@code store} is not the store {@code engine} was built over
     */
    public static <C> RecoveringLeasedIdempotency<C> of(ManagedIdempotency<C> engine, RecoveringStore<C> store) {
        return of(engine, store, LeasePolicy.ofDefaults(), StoreUnavailablePolicy.REFUSE);
    }

    /**
     * Lease mode for the store of a {@link ManagedIdempotency} that lists the named operations in
     * progress too, refusing calls while the store is unreachable: see
     * {@link #of(ManagedIdempotency, RecoveringStore, LeasePolicy, StoreUnavailablePolicy)}.
     *
     * @param engine the engine of the transactional modes over {@code store}
     * @param store the engine's store, typed as one that keeps leases and lists the named operations
     * @param leases the lease length and what an attempt does on a live lease
     * @param <C> the transaction type
     * @return the lease-mode engine, which runs named phases too; build it once and share it
     * @throws IllegalArgumentException if {@code store} is not the store {@code engine} was built over
     */
    public static <C> RecoveringLeasedIdempotency<C> of(ManagedIdempotency<C> engine, RecoveringStore<C> store, LeasePolicy leases) {
        return of(engine, store, leases, StoreUnavailablePolicy.REFUSE);
    }

    /**
     * As {@link #of(ManagedIdempotency, LeasingStore, LeasePolicy, StoreUnavailablePolicy)}, for a
     * store that lists the named operations in progress too (the JDBC store): the engine runs
     * named phases, and a {@link RecoveryWorker} resumes them.
     *
     * @param engine the engine of the transactional modes over {@code store}
     * @param store the engine's store (as given to {@link Idempotency#builder}), typed as one that
     *     keeps leases and lists the named operations
     * @param leases the lease length and what an attempt does on a live lease
     * @param whenUnavailable what a claim that finds the store unreachable does
     * @param <C> the transaction type
     * @return the lease-mode engine, which runs named phases too; build it once and share it
     * @throws IllegalArgumentException if {@code store} is not the store {@code engine} was built over
     */
    public static <C> RecoveringLeasedIdempotency<C> of(ManagedIdempotency<C> engine, RecoveringStore<C> store, LeasePolicy leases,
                                                        StoreUnavailablePolicy whenUnavailable) {
        Idempotency<C> shared = shared(engine, store, leases, whenUnavailable);
        return new RecoveringLeasedIdempotency<>(shared.kernel(), heard(shared, store, RecoveringStore.class), engine.ownTransactions(),
                leases, whenUnavailable);
    }

    /** The engine of {@code engine}, whose store {@code store} must be: lease mode shares its records and settings. */
    private static <C> Idempotency<C> shared(ManagedIdempotency<C> engine, LeasingStore<C> store, LeasePolicy leases,
                                             StoreUnavailablePolicy whenUnavailable) {
        Objects.requireNonNull(engine, "engine");
        Objects.requireNonNull(store, "store");
        Objects.requireNonNull(leases, "leases");
        Objects.requireNonNull(whenUnavailable, "whenUnavailable");
        Idempotency<C> shared = engine.engine();
        if (!shared.isOver(store)) {
            throw new IllegalArgumentException("lease mode shares the engine's records, so it runs over the store the engine was"
                    + " built over, " + shared.store() + "; " + store + " was given. Give the engine's own store");
        }
        return shared;
    }

    /**
     * The shared engine's copy of the store, made for its listener, if it is of {@code kind} (it is the
     * same store: use it rather than a second copy); else {@code store}'s own copy for that listener.
     */
    @SuppressWarnings("unchecked") // heardBy returns a store of the type it is called on (each capability overrides it so)
    private static <C, S extends LeasingStore<C>> S heard(Idempotency<C> shared, S store, Class<?> kind) {
        return kind.isInstance(shared.store()) ? (S) shared.store()
                : (S) Objects.requireNonNull(store.heardBy(shared.listener()), "store.heardBy returned no store");
    }

    /**
     * Lease mode with a call only: runs {@code work} outside any transaction, at most once to
     * completion for the call's key, and records its result fenced by the attempt's owner token,
     * with the call's codec or one chosen by the result's type (see {@link IdempotentCall}).
     *
     * @param call the key, fingerprint and codec
     * @param work the call, given its attempt
     * @param <T> the result type
     * @param <X> the call's checked exception
     * @return the outcome; never {@code null}
     * @throws X the call's own exception, unchanged (the lease was ended, so a retry runs at once)
     * @throws InvalidKeyException if the policy refuses the key
     * @throws LeaseLostException if the lease ended and another attempt took the key over
     * @throws ResultCodecException if the result cannot be encoded (no built-in codec fits it): the
     *     operation is recorded as failed, and no retry runs the call again; or if a replay cannot be decoded
     * @throws ResultTooLargeException if the encoded result is over the policy's limit: the operation
     *     is recorded as failed, and no retry runs the call again
     * @throws IdempotencyStoreException if the store or the database fails
     */
    public <T, X extends Exception> Outcome<T> lease(IdempotentCall<T> call, LeasedWork<T, X> work) throws X {
        Objects.requireNonNull(call, "call");
        return leasedRun(call.key(), call.fingerprint(), null, Phases.<C, T, X>call(work).recorded(call.codecOrNull()));
    }

    /**
     * The shortcut of {@link #lease(IdempotentCall, LeasedWork)} for {@code IdempotentCall.of(key)}:
     * no fingerprint, a built-in codec chosen by the result's type.
     *
     * @param key the key
     * @param work the call, given its attempt
     * @param <T> the result type
     * @param <X> the call's checked exception
     * @return the outcome; never {@code null}
     * @throws X the call's own exception, unchanged (the lease was ended, so a retry runs at once)
     * @throws InvalidKeyException if the policy refuses the key
     * @throws LeaseLostException if the lease ended and another attempt took the key over
     * @throws ResultCodecException if no built-in codec fits the result (the operation is recorded as
     *     failed, and no retry runs the call again), or a replay cannot be decoded
     * @throws ResultTooLargeException if the encoded result is over the policy's limit: the operation
     *     is recorded as failed, and no retry runs the call again
     * @throws IdempotencyStoreException if the store or the database fails
     */
    public <T, X extends Exception> Outcome<T> lease(IdempotencyKey key, LeasedWork<T, X> work) throws X {
        return leasedRun(key, Fingerprint.NONE, null, Phases.<C, T, X>call(work).recorded(null));
    }

    /**
     * Runs an operation in phases under a lease (see {@link Phases} and the protocol above), with
     * the call's key and fingerprint. The result's codec is the one the phases declare
     * ({@code finish(..., codec)} or {@code result(codec)}): a call that names a codec of its own
     * must name the same one.
     *
     * @param call the key and fingerprint (and, if any, the same codec as the phases')
     * @param phases the operation
     * @param <T> the result type
     * @param <X> the phases' checked exception
     * @return the outcome; never {@code null}
     * @throws X a phase's own exception, unchanged
     * @throws InvalidKeyException if the policy refuses the key
     * @throws IllegalArgumentException if the call names another codec than the phases, before any access
     * @throws LeaseLostException if the lease ended and another attempt took the key over
     * @throws ResultCodecException if a value cannot be encoded (the result's: recorded as failed, as
     *     below), or a recorded one decoded
     * @throws ResultTooLargeException if an encoded value is over the policy's limit: the prepare's
     *     value rolls the claim back (nothing recorded, the call not run), the result is recorded as
     *     a failure (no retry runs the call again)
     * @throws IdempotencyStoreException if the store or the database fails
     */
    public <T, X extends Exception> Outcome<T> run(IdempotentCall<T> call, Phases<C, T, X> phases) throws X {
        Objects.requireNonNull(call, "call");
        return leasedRun(call.key(), call.fingerprint(), call.codecOrNull(), phases);
    }

    /**
     * The shortcut of {@link #run(IdempotentCall, Phases)} for {@code IdempotentCall.of(key)}: no
     * fingerprint.
     *
     * @param key the key
     * @param phases the operation
     * @param <T> the result type
     * @param <X> the phases' checked exception
     * @return the outcome; never {@code null}
     * @throws X a phase's own exception, unchanged
     * @throws InvalidKeyException if the policy refuses the key
     * @throws LeaseLostException if the lease ended and another attempt took the key over
     * @throws ResultCodecException if a value cannot be encoded (the result's: recorded as failed, as
     *     below), or a recorded one decoded
     * @throws ResultTooLargeException if an encoded value is over the policy's limit (see
     *     {@link #run(IdempotentCall, Phases)})
     * @throws IdempotencyStoreException if the store or the database fails
     */
    public <T, X extends Exception> Outcome<T> run(IdempotencyKey key, Phases<C, T, X> phases) throws X {
        return leasedRun(key, Fingerprint.NONE, null, phases);
    }

    /** Lease mode for a key, with the codec that the call names ({@code null} if none), which must be the phases' own. */
    final <T, X extends Exception> Outcome<T> leasedRun(IdempotencyKey key, Fingerprint fingerprint, @Nullable ResultCodec<T> named,
                                                          Phases<C, T, X> phases) throws X {
        Objects.requireNonNull(key, "key");
        return kernel.heard().single(key, () -> {
            kernel.policy().validate(key);
            Objects.requireNonNull(phases, "phases");
            if (named != null && !named.name().equals(phases.codec.name())) {
                throw new IllegalArgumentException("the call of key " + key + " names codec '" + named.name()
                        + "' but its phases record the result with codec '" + phases.codec.name() + "': give the codec once,"
                        + " to the phases (finish(..., codec) or result(codec)), and IdempotentCall.of(key, fingerprint) without"
                        + " one. Nothing was read or written");
            }
            return leasing.run(key, fingerprint, phases);
        });
    }

    /** The lease protocol, for the recovery worker. */
    LeaseProtocol<C> leaseProtocol() {
        return leasing;
    }

    Kernel<C> kernel() {
        return kernel;
    }

    OwnTransactions<C> ownTransactions() {
        return transactions;
    }

    /**
     * @return the store the engine uses: the one given to the builder as
     *     {@link LeasingStore#heardBy} returned it for this engine's listener
     */
    public LeasingStore<C> store() {
        return store;
    }

    /** @return the key policy */
    public KeyPolicy keyPolicy() {
        return kernel.policy();
    }

    /** @return what begins and ends this engine's transactions */
    public TransactionRunner<C> transactions() {
        return transactions.runner();
    }

    /** @return the retry policy of the engine's short transactions */
    public RetryPolicy retryPolicy() {
        return transactions.retryPolicy();
    }

    /** @return the lease policy */
    public LeasePolicy leasePolicy() {
        return leases;
    }

    @Override
    public String toString() {
        return "LeasedIdempotency[" + kernel + ", transactions=" + transactions.runner() + ", " + transactions.retryPolicy() + ", "
                + leases + "]";
    }

    /**
     * The settings of lease mode's own engine, beside those of every engine ({@link EngineBuilder}),
     * for the builders of {@link LeasedIdempotency} and {@link RecoveringLeasedIdempotency}. Not
     * thread-safe; what it builds is.
     *
     * @param <C> the transaction type
     * @param <B> the builder's own type, which each setter returns
     */
    public abstract static class AbstractBuilder<C, B extends AbstractBuilder<C, B>> extends EngineBuilder<B> {
        private final TransactionRunner<C> transactions;
        private RetryPolicy retry = RetryPolicy.ofDefaults();
        LeasePolicy leases = LeasePolicy.ofDefaults();
        StoreUnavailablePolicy unavailableStore = StoreUnavailablePolicy.REFUSE;

        AbstractBuilder(TransactionRunner<C> transactions) {
            this.transactions = Objects.requireNonNull(transactions, "transactions");
        }

        /**
         * @param retry how conflicts of the engine's short transactions are retried
         * @return this builder
         */
        public B retryPolicy(RetryPolicy retry) {
            this.retry = Objects.requireNonNull(retry, "retry");
            return self();
        }

        /**
         * @param leases the lease length and what an attempt does on a live lease
         * @return this builder
         */
        public B leasePolicy(LeasePolicy leases) {
            this.leases = Objects.requireNonNull(leases, "leases");
            return self();
        }

        /**
         * What lease mode does when its claim finds the store unreachable
         * ({@link StoreUnavailableException}): by default {@link StoreUnavailablePolicy#REFUSE}, the
         * call refused with that exception; {@link StoreUnavailablePolicy#RUN_WITHOUT_DEDUPLICATION}
         * runs it without deduplication and tells the listener.
         *
         * @param policy the policy
         * @return this builder
         */
        public B whenStoreUnavailable(StoreUnavailablePolicy policy) {
            this.unavailableStore = Objects.requireNonNull(policy, "policy");
            return self();
        }

        /** The engine's own transactions, reporting to the listener of {@code kernel}. */
        OwnTransactions<C> ownTransactions(Kernel<C> kernel) {
            return new OwnTransactions<>(transactions, retry, kernel.heard());
        }
    }

    /**
     * Builds a {@link LeasedIdempotency}. Not thread-safe; what it builds is.
     *
     * @param <C> the transaction type
     */
    public static final class Builder<C> extends AbstractBuilder<C, Builder<C>> {
        private final LeasingStore<C> store;

        private Builder(LeasingStore<C> store, TransactionRunner<C> transactions) {
            super(transactions);
            this.store = Objects.requireNonNull(store, "store");
        }

        /** @return the engine */
        public LeasedIdempotency<C> build() {
            LeasingStore<C> heard = Objects.requireNonNull(store.heardBy(listener), "store.heardBy returned no store");
            Kernel<C> kernel = kernelOver(heard);
            return new LeasedIdempotency<>(kernel, heard, ownTransactions(kernel), leases, unavailableStore);
        }
    }
}
