package dev.idempotency.testkit;

import static dev.idempotency.testkit.StoreFixture.A;
import static dev.idempotency.testkit.StoreFixture.ENGINE_SHORT_LEASE;
import static dev.idempotency.testkit.StoreFixture.LIVE_LEASE;
import static dev.idempotency.testkit.StoreFixture.RETENTION;
import static dev.idempotency.testkit.StoreFixture.SHORT_LEASE;
import static dev.idempotency.testkit.StoreFixture.acquired;
import static dev.idempotency.testkit.StoreFixture.assertOutcome;
import static dev.idempotency.testkit.StoreFixture.catchThrowable;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.LeaseLostException;
import dev.idempotency.LeasePolicy;
import dev.idempotency.LeasedWork;
import dev.idempotency.LeasedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.Phases;
import dev.idempotency.ResultCodec;
import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeasedCompletion;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.RecoveryPoint;
import dev.idempotency.testkit.StoreFixture.Counting;
import dev.idempotency.testkit.StoreFixture.FinalFailure;
import dev.idempotency.testkit.StoreFixture.PlainFailure;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Lease mode through the engine, {@link dev.idempotency.ManagedIdempotency} ({@code lease} and
 * {@code run}) over the runner of {@link StoreFixture#transactions()}: {@code Contract 4 (leased
 * call)}, {@code Contract 4 (call throws)}, {@code Contract 4 (final failure)}, {@code Contract 4
 * (resume)} and {@code Contract 4 (lease lost)}, one example each. For a store without
 * transactions ({@link dev.idempotency.spi.LeaseOnlyStore}), the finish phase writes nothing of its
 * own, since it has no transaction to write in.
 *
 * <p>Implement it only for a {@link dev.idempotency.spi.LeasingStore}: for another store its tests
 * fail (under {@link IdempotencyStoreContract} they are skipped).
 *
 * @param <C> the store's transaction type
 */
public interface LeasedCallContract<C> extends ContractPart<C> {

    /**
     * Contract 4 (docs/contract.md): a leased call runs once; every retry replays its result.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void leasedCallRunsOnceAndReplays() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.LEASED_CALL;
        IdempotencyKey key = IdempotencyKey.of("leased", "once");
        LeasedIdempotency<C> managed = f.managed(LeasePolicy.DEFAULT_LEASE);
        AtomicInteger calls = new AtomicInteger();
        LeasedWork<String, RuntimeException> call = attempt -> "charged " + calls.incrementAndGet() + " on attempt " + attempt.number();
        assertOutcome(p, managed.lease(IdempotentCall.of(key, ResultCodec.string()).withFingerprint(A), call), Outcome.Status.EXECUTED, "charged 1 on attempt 1");
        assertOutcome(p, managed.lease(IdempotentCall.of(key, ResultCodec.string()).withFingerprint(A), call), Outcome.Status.REPLAYED, "charged 1 on attempt 1");
        assertThat(calls.get()).as(p.broken("The call ran again")).isEqualTo(1);
    }

    /**
     * Contract 4 (docs/contract.md): a call that throws (not final) passes its exception through
     * and leaves the key claimable at once.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void leasedCallThatThrowsLeavesTheKeyClaimableAtOnce() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.LEASED_CALL_THROWS;
        IdempotencyKey key = IdempotencyKey.of("leased", "throws");
        LeasedIdempotency<C> managed = f.managed(LIVE_LEASE);
        PlainFailure thrown = new PlainFailure("provider timed out");
        Throwable caught = catchThrowable(() -> managed.lease(IdempotentCall.of(key, ResultCodec.string()).withFingerprint(A), attempt -> {
            throw thrown;
        }));
        assertThat(caught).as(p.broken("The caller did not get the call's own exception")).isSameAs(thrown);
        Outcome<String> retried = managed.lease(IdempotentCall.of(key, ResultCodec.string()).withFingerprint(A), attempt -> "retried on attempt " + attempt.number());
        assertOutcome(p, retried, Outcome.Status.EXECUTED, "retried on attempt 2");
    }

    /**
     * Contract 4 (docs/contract.md): a final failure of the call is recorded and replayed; the call
     * does not run again.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void leasedFinalFailureIsRecordedAndReplayed() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.LEASED_FINAL_FAILURE;
        IdempotencyKey key = IdempotencyKey.of("leased", "final-failure");
        LeasedIdempotency<C> managed = f.managed(LeasePolicy.DEFAULT_LEASE);
        AtomicInteger calls = new AtomicInteger();
        LeasedWork<String, RuntimeException> declined = attempt -> {
            calls.incrementAndGet();
            throw new FinalFailure("card declined");
        };
        Outcome<String> first = managed.lease(IdempotentCall.of(key, ResultCodec.string()).withFingerprint(A), declined);
        assertThat(first).as(p.broken("The first attempt's outcome")).isInstanceOfSatisfying(Outcome.Failed.class,
                failure -> assertThat(failure.replayed()).as(p.broken("The first failure is marked replayed")).isFalse());
        Outcome<String> again = managed.lease(IdempotentCall.of(key, ResultCodec.string()).withFingerprint(A), declined);
        assertThat(again).as(p.broken("The retry's outcome")).isInstanceOf(Outcome.Failed.class);
        Outcome.Failed<String> failed = (Outcome.Failed<String>) again;
        assertThat(failed.replayed()).as(p.broken("The retry's failure is not marked replayed")).isTrue();
        assertThat(failed.errorMessage()).as(p.broken("The replayed failure's message")).isEqualTo("card declined");
        assertThat(calls.get()).as(p.broken("The call ran again")).isEqualTo(1);
    }

    /**
     * Contract 4 (docs/contract.md): after a crash once the claim and its prepare phase committed
     * (an attempt that stops without releasing its lease), the next attempt takes the claim over
     * when the lease ends, does not run prepare again, and its call receives the recorded value.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void crashAfterPrepareResumesWithTheRecordedValue() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.LEASED_RESUME;
        IdempotencyKey key = IdempotencyKey.of("leased", "resume");
        ResultCodec<String> codec = ResultCodec.string();
        f.claimLease(key, A, "crashed", SHORT_LEASE, true, new RecoveryPoint(codec.name(), codec.encode("charge #42 pending")));
        f.letLeaseRunOut(SHORT_LEASE);
        AtomicInteger prepares = new AtomicInteger();
        AtomicReference<String> resumed = new AtomicReference<>();
        Phases<C, String, RuntimeException> charge = Phases.<C, String, RuntimeException>prepare(tx -> "charge #" + prepares.incrementAndGet()
                + " pending (prepared again)", codec).<String>call((attempt, prepared) -> {
                    resumed.set("attempt " + attempt.number() + (attempt.resumed() ? ", resumed" : ", not resumed") + ", given " + prepared);
                    return "paid " + prepared;
                }).result(codec);
        Outcome<String> outcome = f.managed(LeasePolicy.DEFAULT_LEASE).run(IdempotentCall.of(key, A), charge);
        assertThat(prepares.get()).as(p.broken("prepare ran again")).isZero();
        assertThat(resumed.get()).as(p.broken("What the call saw")).isEqualTo("attempt 2, resumed, given charge #42 pending");
        assertOutcome(p, outcome, Outcome.Status.EXECUTED, "paid charge #42 pending");
    }

    /**
     * Contract 4 (docs/contract.md): an attempt whose lease ran out and was taken over (here by a
     * claim of another owner while its call ran) gets LeaseLostException when it finishes; its
     * finishing writes are rolled back, and the new owner's result stands.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void staleOwnerGetsLeaseLostAndItsFinishIsNotRecorded() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.LEASE_LOST;
        IdempotencyKey key = IdempotencyKey.of("leased", "lost");
        IdempotencyKey finishWrite = IdempotencyKey.of("leased", "lost-finish-write");
        LeasedIdempotency<C> managed = f.managed(ENGINE_SHORT_LEASE);
        AtomicReference<LeaseClaim> takeOver = new AtomicReference<>();
        Phases<C, String, Exception> slow = Phases.<C, String, Exception>call(attempt -> {
            f.letLeaseRunOut(ENGINE_SHORT_LEASE);
            takeOver.set(f.claimLease(key, A, "new owner", LIVE_LEASE, true));
            return "from the stale attempt";
        }).finish((tx, none, called) -> {
            if (f.hasTransactions()) {
                f.idem.execute(IdempotentCall.of(finishWrite, A), tx, () -> "finish write");
            }
            return called;
        }, ResultCodec.string());
        Throwable thrown = catchThrowable(() -> managed.run(IdempotentCall.of(key, A), slow));
        acquired(p, takeOver.get(), 2, null);
        assertThat(thrown).as(p.broken("The stale attempt's finish")).isInstanceOf(LeaseLostException.class);
        if (f.hasTransactions()) {
            assertOutcome(p, f.inTx(f.idem, finishWrite, A, new Counting("after"), false), Outcome.Status.EXECUTED, "after");
        }
        ResultCodec<String> codec = ResultCodec.string();
        byte[] result = codec.encode("from the new owner");
        assertThat(f.ended(tx -> f.leasing().completeLeased(tx, "new owner", new LeasedCompletion(key, RecordStatus.COMPLETED, codec.name(),
                result, RETENTION)))).as(p.broken("The new owner could not complete")).isPresent();
        assertOutcome(p, managed.lease(IdempotentCall.of(key, codec).withFingerprint(A), next -> "again"), Outcome.Status.REPLAYED, "from the new owner");
    }
}
