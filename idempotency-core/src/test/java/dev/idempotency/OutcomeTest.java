package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import org.junit.jupiter.api.Test;

class OutcomeTest {

    private final IdempotencyKey key = IdempotencyKey.of("tenant-7", "k-9");

    @Test
    void valueIsReturnedOrATypedExceptionNamesTheKeyAndReason() {
        assertThat(new Outcome.Executed<>(key, "v").value()).isEqualTo("v");
        assertThat(new Outcome.Replayed<>(key, "v", Instant.EPOCH, Instant.EPOCH).value()).isEqualTo("v");
        assertThatThrownBy(() -> new Outcome.InProgress<String>(key).value()).isInstanceOf(KeyInProgressException.class)
                .hasMessageContaining("tenant-7").hasMessageContaining("k-9")
                .satisfies(e -> assertThat(((IdempotencyException) e).isRetryable()).isTrue());
        assertThatThrownBy(() -> new Outcome.Mismatch<String>(key).value()).isInstanceOf(KeyMismatchException.class)
                .hasMessageContaining("different request");
        assertThatThrownBy(() -> new Outcome.Failed<String>(key, "com.shop.Declined", "no funds", Instant.EPOCH, true).value())
                .isInstanceOf(RecordedFailureException.class).hasMessageContaining("com.shop.Declined: no funds")
                .satisfies(e -> assertThat(((RecordedFailureException) e).keyId()).isEqualTo("k-9"));
    }

    @Test
    void statusAndReplayFlagsAreConsistent() {
        assertThat(new Outcome.Executed<>(key, 1).isReplay()).isFalse();
        assertThat(new Outcome.Replayed<>(key, 1, Instant.EPOCH, Instant.EPOCH).isReplay()).isTrue();
        assertThat(new Outcome.Failed<Integer>(key, "T", null, Instant.EPOCH, false).isReplay()).isFalse();
        assertThat(new Outcome.Failed<Integer>(key, "T", null, Instant.EPOCH, true).isReplay()).isTrue();
        assertThat(new Outcome.Mismatch<Integer>(key).valueOr(-1)).isEqualTo(-1);
        assertThat(new Outcome.Mismatch<Integer>(key).hasValue()).isFalse();
        assertThat(new Outcome.Executed<Integer>(key, null).hasValue()).isTrue();
        assertThat(new Outcome.Executed<>(key, 1).isExecuted()).isTrue();
        assertThat(new Outcome.Replayed<>(key, 1, Instant.EPOCH, Instant.EPOCH).isExecuted()).isFalse();
        assertThat(new Outcome.Failed<Integer>(key, "T", null, Instant.EPOCH, false).isExecuted()).isFalse();
        assertThat(new Outcome.Mismatch<Integer>(key).isExecuted()).isFalse();
    }

    /** The example of the {@link Outcome} Javadoc, as written there: it answers every status without throwing. */
    @Test
    void theJavadocExampleAnswersEveryStatusWithoutThrowing() {
        assertThat(javadocExample(new Outcome.Executed<>(key, "r-1"))).isEqualTo("200 r-1");
        assertThat(javadocExample(new Outcome.Replayed<>(key, "r-1", Instant.EPOCH, Instant.EPOCH))).isEqualTo("200 r-1");
        assertThat(javadocExample(new Outcome.InProgress<>(key))).isEqualTo("409 retry later");
        assertThat(javadocExample(new Outcome.Mismatch<>(key))).isEqualTo("422 key reused for another request");
        assertThat(javadocExample(new Outcome.Failed<>(key, "com.shop.Declined", "no funds", Instant.EPOCH, true)))
                .isEqualTo("402 no funds");
    }

    private static String javadocExample(Outcome<String> outcome) {
        String[] response = new String[1];
        java.util.function.BiConsumer<Integer, String> respond = (status, body) -> response[0] = status + " " + body;
        switch (outcome.status()) {
            case EXECUTED, REPLAYED -> respond.accept(200, outcome.value());
            case IN_PROGRESS -> respond.accept(409, "retry later");
            case MISMATCH -> respond.accept(422, "key reused for another request");
            case FAILED -> respond.accept(402, ((Outcome.Failed<String>) outcome).errorMessage()); // value() would throw
        }
        return response[0];
    }
}
