package dev.idempotency;

import dev.idempotency.spi.RecoveringStore;
import dev.idempotency.spi.TransactionRunner;
import java.util.Objects;

/**
 * Lease mode over a store that lists the named operations in progress (a {@link RecoveringStore}:
 * the JDBC store): a {@link LeasedIdempotency} that runs {@link NamedPhases} too, and the engine a
 * {@link RecoveryWorker} resumes them with. Every factory of {@link LeasedIdempotency} returns one
 * when it is given such a store, typed as one:
 *
 * <pre>{@code
 * RecoveringLeasedIdempotency<Connection> leased = LeasedIdempotency.of(managed, jdbcStore);
 * leased.run(key, chargePhases);                 // Phases ... .named("charge")
 * RecoveryWorker<Connection> worker = RecoveryWorker.builder(leased).register(chargePhases).build();
 * }</pre>
 *
 * <p>Instances are immutable and thread-safe: build one and share it.
 *
 * @param <C> the transaction type
 */
public final class RecoveringLeasedIdempotency<C> extends LeasedIdempotency<C> {

    private final RecoveringStore<C> store;

    RecoveringLeasedIdempotency(Kernel<C> kernel, RecoveringStore<C> store, OwnTransactions<C> transactions, LeasePolicy leases,
                                StoreUnavailablePolicy unavailableStore) {
        super(kernel, store, transactions, leases, unavailableStore);
        this.store = store;
    }

    /**
     * Runs a named operation under a lease, as {@link #run(IdempotentCall, Phases)} does, and
     * records its name with the recovery point in the claim's transaction, so that a
     * {@link RecoveryWorker} resumes it if its client goes away.
     *
     * @param call the key and fingerprint (and, if any, the same codec as the phases')
     * @param phases the named operation
     * @param <T> the result type
     * @param <X> the phases' checked exception
     * @return the outcome; never {@code null}
     * @throws X a phase's own exception, unchanged
     * @throws InvalidKeyException if the policy refuses the key
     * @throws IllegalArgumentException if the call names another codec than the phases, before any access
     * @throws LeaseLostException if the lease ended and another attempt took the key over
     * @throws ResultCodecException if a value cannot be encoded, or a recorded one decoded (see
     *     {@link #run(IdempotentCall, Phases)})
     * @throws ResultTooLargeException if an encoded value is over the policy's limit (see
     *     {@link #run(IdempotentCall, Phases)})
     * @throws IdempotencyStoreException if the store or the database fails
     */
    public <T, X extends Exception> Outcome<T> run(IdempotentCall<T> call, NamedPhases<C, T, X> phases) throws X {
        Objects.requireNonNull(call, "call");
        return leasedRun(call.key(), call.fingerprint(), call.codecOrNull(), Objects.requireNonNull(phases, "phases").phases);
    }

    /**
     * The shortcut of {@link #run(IdempotentCall, NamedPhases)} for {@code IdempotentCall.of(key)}:
     * no fingerprint.
     *
     * @param key the key
     * @param phases the named operation
     * @param <T> the result type
     * @param <X> the phases' checked exception
     * @return the outcome; never {@code null}
     * @throws X a phase's own exception, unchanged
     * @throws InvalidKeyException if the policy refuses the key
     * @throws LeaseLostException if the lease ended and another attempt took the key over
     * @throws ResultCodecException if a value cannot be encoded, or a recorded one decoded
     * @throws ResultTooLargeException if an encoded value is over the policy's limit
     * @throws IdempotencyStoreException if the store or the database fails
     */
    public <T, X extends Exception> Outcome<T> run(IdempotencyKey key, NamedPhases<C, T, X> phases) throws X {
        return leasedRun(key, Fingerprint.NONE, null, Objects.requireNonNull(phases, "phases").phases);
    }

    /**
     * @return the store the engine uses, which lists the named operations: the one given to the
     *     builder as {@link RecoveringStore#heardBy} returned it for this engine's listener
     */
    @Override
    public RecoveringStore<C> store() {
        return store;
    }

    /**
     * Builds a {@link RecoveringLeasedIdempotency}: {@link LeasedIdempotency#builder(RecoveringStore, TransactionRunner)}.
     * Not thread-safe; what it builds is.
     *
     * @param <C> the transaction type
     */
    public static final class Builder<C> extends LeasedIdempotency.AbstractBuilder<C, Builder<C>> {
        private final RecoveringStore<C> store;

        Builder(RecoveringStore<C> store, TransactionRunner<C> transactions) {
            super(transactions);
            this.store = Objects.requireNonNull(store, "store");
        }

        /** @return the engine */
        public RecoveringLeasedIdempotency<C> build() {
            RecoveringStore<C> heard = Objects.requireNonNull(store.heardBy(listener), "store.heardBy returned no store");
            Kernel<C> kernel = kernelOver(heard);
            return new RecoveringLeasedIdempotency<>(kernel, heard, ownTransactions(kernel), leases, unavailableStore);
        }
    }
}
