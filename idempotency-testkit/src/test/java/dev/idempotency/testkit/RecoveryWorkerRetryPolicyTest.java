package dev.idempotency.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.LeasedIdempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.NamedPhases;
import dev.idempotency.Phases;
import dev.idempotency.RecoveringLeasedIdempotency;
import dev.idempotency.ResultCodec;
import dev.idempotency.RecoveryWorker;
import dev.idempotency.RetryPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The recovery worker's attempts and backoff come from its {@link RetryPolicy}, bounded by the
 * interval, on the reference in-memory store. No test waits: a backoff of a day is never over
 * within the test, one of zero (or an interval of a nanosecond) is over at the next pass.
 */
class RecoveryWorkerRetryPolicyTest {

    private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
    private final RecoveringLeasedIdempotency<InMemoryIdempotencyStore.Transaction> managed =
            LeasedIdempotency.of(ManagedIdempotency.of(Idempotency.of(store), store.transactions()), store);
    private final AtomicInteger calls = new AtomicInteger();
    private final NamedPhases<InMemoryIdempotencyStore.Transaction, String, Exception> failing = Phases
            .<InMemoryIdempotencyStore.Transaction, String, Exception>prepare(tx -> "order-1", ResultCodec.string())
            .<String>call((attempt, order) -> {
                calls.incrementAndGet();
                throw new IllegalStateException("provider down");
            }).result(ResultCodec.string()).named("charge");

    @Test
    void aFailedAttemptIsNotTriedAgainBeforeThePolicysBackoff() {
        abandon("backoff-of-a-day");
        RecoveryWorker<InMemoryIdempotencyStore.Transaction> worker = RecoveryWorker.builder(managed).register(failing)
                .retryPolicy(RetryPolicy.builder().maxAttempts(5).backoff(Duration.ofDays(1), Duration.ofDays(1)).build())
                .interval(Duration.ofDays(1)).build();

        List<RecoveryWorker.Pass> passes = List.of(worker.runOnce(), worker.runOnce(), worker.runOnce());

        assertThat(passes).extracting(RecoveryWorker.Pass::retrying).containsExactly(1, 0, 0);
        assertThat(calls).as("the client's call and the worker's first attempt only").hasValue(2);
    }

    @Test
    void thePolicysAttemptsAreAllAnOperationHas_andAZeroBackoffTriesAgainAtTheNextPass() {
        abandon("zero-backoff");
        RecoveryWorker<InMemoryIdempotencyStore.Transaction> worker = RecoveryWorker.builder(managed).register(failing)
                .retryPolicy(RetryPolicy.builder().maxAttempts(3).backoff(Duration.ZERO, Duration.ZERO).build()).build();

        List<RecoveryWorker.Pass> passes = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            passes.add(worker.runOnce());
        }

        assertThat(passes).extracting(RecoveryWorker.Pass::retrying).containsExactly(1, 1, 0, 0);
        assertThat(passes).extracting(RecoveryWorker.Pass::gaveUp).containsExactly(0, 0, 1, 0);
        assertThat(calls).as("three attempts in all, the client's included").hasValue(3);
        assertThat(worker.toString()).contains("maxAttempts=3");
    }

    @Test
    void theIntervalBoundsTheBackoffWhateverThePolicys() {
        abandon("short-interval");
        RecoveryWorker<InMemoryIdempotencyStore.Transaction> worker = RecoveryWorker.builder(managed).register(failing)
                .retryPolicy(RetryPolicy.builder().maxAttempts(3).backoff(Duration.ofDays(1), Duration.ofDays(1)).build())
                .interval(Duration.ofNanos(1)).build();

        List<RecoveryWorker.Pass> passes = List.of(worker.runOnce(), worker.runOnce(), worker.runOnce());

        assertThat(passes).extracting(RecoveryWorker.Pass::retrying).containsExactly(1, 1, 0);
        assertThat(passes.get(2).gaveUp()).isEqualTo(1);
    }

    @Test
    void maxAttemptsAndBackoffOfTheBuilderSetTheOnePolicy() {
        abandon("shorthands");
        RecoveryWorker<InMemoryIdempotencyStore.Transaction> worker = RecoveryWorker.builder(managed).register(failing)
                .interval(Duration.ofDays(1)).backoff(Duration.ofHours(1)).maxAttempts(2).build();

        List<RecoveryWorker.Pass> passes = List.of(worker.runOnce(), worker.runOnce());

        assertThat(passes).extracting(RecoveryWorker.Pass::retrying).containsExactly(1, 0); // an hour's backoff kept
        assertThat(worker.toString()).contains("maxAttempts=2");
        assertThat(RecoveryWorker.Builder.DEFAULT_RETRY.maxAttempts()).isEqualTo(5);
        assertThat(RecoveryWorker.Builder.DEFAULT_RETRY.backoffBound(1)).isEqualTo(Duration.ofSeconds(1));
        assertThat(RecoveryWorker.Builder.DEFAULT_RETRY.backoffBound(6)).isEqualTo(Duration.ofSeconds(32));
    }

    /** The client's call fails and ends its lease: the named operation is abandoned, attempt 1 spent. */
    private void abandon(String id) {
        IdempotencyKey key = IdempotencyKey.of("worker-policy", id);
        Throwable failure = catchThrowable(() -> managed.run(IdempotentCall.of(key, ResultCodec.string()), failing));
        assertThat(failure).hasMessage("provider down");
        assertThat(calls).hasValue(1);
    }
}
