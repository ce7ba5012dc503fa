package dev.idempotency.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
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
 * A result within the policy's limit (1 MiB by default) but over DynamoDB's 400 KB item: the call
 * has run, the completion is refused before it is sent, and the engine records the operation as
 * failed, so that a retry gets the failure back instead of running the call a second time.
 */
class ItemSizeLimitTest {

    @Test
    void aResultOverTheItemLimitIsRecordedAsFailedAndTheCallIsNotRunAgain() {
        DynamoDbLeasingStore store = DynamoDbLeasingStore.builder(DynamoDbServers.client(), "item-limit").build();
        store.createTableIfMissing();
        LeasedIdempotency<NoTransaction> payments = LeasedIdempotency.of(store);
        IdempotentCall<String> call = IdempotentCall.of(IdempotencyKey.of("orders", "large-" + System.nanoTime()), ResultCodec.string());
        AtomicInteger calls = new AtomicInteger();
        int size = 500 * 1024;

        assertThatThrownBy(() -> payments.lease(call, attempt -> {
            calls.incrementAndGet();
            return "r".repeat(size);
        })).isInstanceOf(ResultTooLargeException.class)
                .hasMessageContaining("over DynamoDB's item size limit of " + DynamoDbLeasingStore.MAX_ITEM_BYTES + " bytes")
                .hasMessageContaining("the operation is recorded as failed")
                .hasMessageContaining("nothing of the result was written").hasMessageNotContaining("rolled back")
                .satisfies(e -> assertThat(((ResultTooLargeException) e).size()).isEqualTo(size));

        Outcome<String> retry = payments.lease(call, attempt -> {
            calls.incrementAndGet();
            return "small";
        });
        assertThat(retry.status()).as("the retry gets the recorded failure").isEqualTo(Outcome.Status.FAILED);
        assertThat(calls).as("the call ran once").hasValue(1);
    }

    @Test
    void aRecoveryPointOverTheItemLimitIsRefusedAndNothingOfTheKeyStaysRecorded() {
        DynamoDbLeasingStore store = DynamoDbLeasingStore.builder(DynamoDbServers.client(), "item-limit").build();
        store.createTableIfMissing();
        LeasedIdempotency<NoTransaction> payments = LeasedIdempotency.of(store);
        IdempotencyKey key = IdempotencyKey.of("orders", "large-point-" + System.nanoTime());
        AtomicInteger prepares = new AtomicInteger();
        AtomicInteger calls = new AtomicInteger();
        int size = 500 * 1024;
        Phases<NoTransaction, String, RuntimeException> large = Phases.<NoTransaction, String, RuntimeException>prepare(tx -> {
            prepares.incrementAndGet();
            return "p".repeat(size);
        }, ResultCodec.string()).call((attempt, prepared) -> {
            calls.incrementAndGet();
            return "charged";
        }).result(ResultCodec.string());

        assertThatThrownBy(() -> payments.run(key, large)).isInstanceOf(ResultTooLargeException.class)
                .hasMessageContaining("over DynamoDB's item size limit of " + DynamoDbLeasingStore.MAX_ITEM_BYTES + " bytes")
                .hasMessageContaining("the claim was withdrawn: nothing of the key is recorded, and the call did not run")
                .hasMessageNotContaining("rolled back")
                .satisfies(e -> assertThat(((ResultTooLargeException) e).size()).isEqualTo(size))
                .cause().as("the store's own refusal").isInstanceOf(ResultTooLargeException.class).hasMessageContaining("nothing was sent");
        assertThat(calls).as("the call did not run").hasValue(0);

        Phases<NoTransaction, String, RuntimeException> small = Phases.<NoTransaction, String, RuntimeException>prepare(tx -> {
            prepares.incrementAndGet();
            return "p";
        }, ResultCodec.string()).call((attempt, prepared) -> {
            calls.incrementAndGet();
            return "charged " + attempt.number();
        }).result(ResultCodec.string());
        assertThat(payments.run(key, small)).as("the key is free at once: a new claim, attempt 1")
                .isEqualTo(new Outcome.Executed<>(key, "charged 1"));
        assertThat(payments.run(key, small).value()).as("replayed").isEqualTo("charged 1");
        assertThat(prepares).as("one prepare each, none repeated for the settled key").hasValue(2);
    }

    @Test
    void aResultJustUnderTheItemLimitIsRecorded() {
        DynamoDbLeasingStore store = DynamoDbLeasingStore.builder(DynamoDbServers.client(), "item-limit").build();
        store.createTableIfMissing();
        LeasedIdempotency<NoTransaction> payments = LeasedIdempotency.of(store);
        IdempotentCall<String> call = IdempotentCall.of(IdempotencyKey.of("orders", "fits-" + System.nanoTime()), ResultCodec.string());
        String result = "r".repeat(DynamoDbLeasingStore.MAX_ITEM_BYTES - 4096);

        assertThat(payments.lease(call, attempt -> result).isExecuted()).isTrue();
        assertThat(payments.lease(call, attempt -> "not run").value()).as("replayed").isEqualTo(result);
    }
}
