package dev.idempotency.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.KeyPolicy;
import dev.idempotency.LeasedIdempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.Phases;
import dev.idempotency.ResultCodec;
import dev.idempotency.ResultTooLargeException;
import dev.idempotency.spi.NoTransaction;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Values over the policy's size limit on Redis, which has no transaction: the messages say what
 * happened there (nothing written; nothing rolled back), and a prepare value over the limit leaves
 * nothing of the key, so the next attempt claims it anew at once.
 */
class UnrecordableValuesTest {

    private final LeasedIdempotency<NoTransaction> managed = LeasedIdempotency.builder(
            RedisLeasingStore.builder(RedisServers.single()).build())
                    .keyPolicy(KeyPolicy.builder().maxResultBytes(16).build()).build();

    @Test
    void aResultOverTheLimitSaysNothingOfItWasWrittenAndIsRecordedAsFailed() {
        IdempotentCall<String> call = IdempotentCall.of(IdempotencyKey.of("orders", "large-" + System.nanoTime()), ResultCodec.string());
        assertThatThrownBy(() -> managed.lease(call, attempt -> "a result of more than sixteen bytes"))
                .isInstanceOf(ResultTooLargeException.class)
                .hasMessageContaining("nothing of the result was written, and the operation is recorded as failed")
                .hasMessageNotContaining("rolled back");
        assertThat(managed.lease(call, attempt -> "small").status()).isEqualTo(Outcome.Status.FAILED);
    }

    @Test
    void aPrepareValueOverTheLimitWithdrawsTheClaim() {
        IdempotencyKey key = IdempotencyKey.of("orders", "large-point-" + System.nanoTime());
        AtomicInteger calls = new AtomicInteger();
        Phases<NoTransaction, String, RuntimeException> large = Phases.<NoTransaction, String, RuntimeException>prepare(
                tx -> "a prepare value of more than sixteen bytes", ResultCodec.string()).call((attempt, prepared) -> {
                    calls.incrementAndGet();
                    return "charged";
                }).result(ResultCodec.string());
        assertThatThrownBy(() -> managed.run(key, large)).isInstanceOf(ResultTooLargeException.class)
                .hasMessageContaining("the claim was withdrawn: nothing of the key is recorded, and the call did not run")
                .hasMessageNotContaining("rolled back");
        assertThat(calls).hasValue(0);
        Phases<NoTransaction, String, RuntimeException> small = Phases.<NoTransaction, String, RuntimeException>prepare(
                tx -> "p", ResultCodec.string()).call((attempt, prepared) -> "charged " + attempt.number()).result(ResultCodec.string());
        assertThat(managed.run(key, small)).as("claimed anew at once, as attempt 1").isEqualTo(new Outcome.Executed<>(key, "charged 1"));
    }
}
