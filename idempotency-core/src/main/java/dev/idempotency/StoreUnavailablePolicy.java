package dev.idempotency;

/**
 * What lease mode does when its claim finds the store unreachable ({@link StoreUnavailableException}),
 * the call not yet run: there is no free choice. Refusing is another failure, but it never runs an
 * operation twice; running the call without the store keeps the service up, but every retry of an
 * operation that ran meanwhile runs it again. Set with
 * {@link ManagedIdempotency.Builder#whenStoreUnavailable(StoreUnavailablePolicy)}; the default is
 * {@link #REFUSE}.
 *
 * <p>Only the claim is concerned: once the call has run, a store that cannot record its result
 * fails the call with the store's exception, whatever the policy (the lease ends on its own, and a
 * retry after it runs the call again unless the downstream service deduplicates on the attempt's
 * {@link LeaseAttempt#downstreamKey() downstream key}).
 */
public enum StoreUnavailablePolicy {

    /** Refuse the call with the {@link StoreUnavailableException}: the call does not run. The default. */
    REFUSE,

    /**
     * Run the call without deduplication: no claim, no lease, no record. The prepare phase, the call
     * and the finish phase run once each, as for a first attempt; a failure reaches the caller
     * unchanged, final or not, since no record can keep it. The outcome is {@link Outcome.Executed}
     * as for a first execution, and every such call is reported to
     * {@link IdempotencyListener#onRunWithoutDeduplication}. A retry of the same operation, now or
     * once the store is back, runs it again.
     */
    RUN_WITHOUT_DEDUPLICATION
}
