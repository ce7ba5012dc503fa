package dev.idempotency;

import dev.idempotency.spi.IdempotencyStore;
import java.time.InstantSource;
import java.util.Objects;

/**
 * The settings every engine of its own is built with, set here once for the builders of
 * {@link Idempotency} and {@link LeasedIdempotency}: the key policy, the clock and the listener.
 * An engine built over another one ({@link ManagedIdempotency},
 * {@link LeasedIdempotency#of(ManagedIdempotency, dev.idempotency.spi.LeasingStore)}) shares that
 * one's settings and has none of these. Not thread-safe; what it builds is.
 *
 * @param <B> the builder's own type, which each setter returns
 */
public abstract class EngineBuilder<B extends EngineBuilder<B>> {

    KeyPolicy policy = KeyPolicy.ofDefaults();
    InstantSource clock = InstantSource.system();
    IdempotencyListener listener = IdempotencyListener.NONE;

    /** Only the builders of this package extend it, each with itself as {@code B}. */
    EngineBuilder() {
    }

    /**
     * @param policy key rules, retention, lock timeout, result size limit and final failures
     * @return this builder
     */
    public B keyPolicy(KeyPolicy policy) {
        this.policy = Objects.requireNonNull(policy, "policy");
        return self();
    }

    /**
     * @param clock the source of the current time (a {@link java.time.Clock} is one; tests pass a
     *     settable one): the times of the records the engine writes in the caller's transaction,
     *     and the timings the listener hears; leases follow the store's clock, never this one
     * @return this builder
     */
    public B clock(InstantSource clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
        return self();
    }

    /**
     * @param listener told about every outcome and error, with timings, in every mode built on
     *     this engine (see {@link IdempotencyListener})
     * @return this builder
     */
    public B listener(IdempotencyListener listener) {
        this.listener = Objects.requireNonNull(listener, "listener");
        return self();
    }

    /** The steps every mode shares, over {@code heard} (the store as it was made for the listener) and these settings. */
    <C> Kernel<C> kernelOver(IdempotencyStore<C> heard) {
        return new Kernel<>(heard, policy, clock, listener);
    }

    /** @return this builder, as its own type */
    @SuppressWarnings("unchecked") // each subclass is its own B: the constructor is this package's alone
    final B self() {
        return (B) this;
    }
}
