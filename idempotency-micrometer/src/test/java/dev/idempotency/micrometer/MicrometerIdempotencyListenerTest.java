package dev.idempotency.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.RecoveryAction;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The counters of the listener that no context test reaches: duplicates by cause, and the recovery worker's actions. */
class MicrometerIdempotencyListenerTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final IdempotencyKey key = IdempotencyKey.of("tenant-1", "k");

    @Test
    void duplicatesAreCountedByTheCauseTheAdapterTold_neverByKey() {
        MicrometerIdempotencyListener listener = new MicrometerIdempotencyListener(registry, false);
        listener.onDuplicate(key, "redelivered");
        listener.onDuplicate(key, "redelivered");
        listener.onDuplicate(key, "sent-again");
        assertThat(registry.get(MicrometerIdempotencyListener.DUPLICATES).tag("cause", "redelivered").counter().count()).isEqualTo(2);
        assertThat(registry.get(MicrometerIdempotencyListener.DUPLICATES).tag("cause", "sent-again").counter().count()).isEqualTo(1);
        assertThat(registry.getMeters()).allSatisfy(m -> assertThat(m.getId().getTags()).noneMatch(t -> t.getValue().equals("k")));
    }

    @Test
    void theRecoveryWorkersActionsAreCountedByActionAndOperation_withTheScopeOnlyWhenAsked() {
        MicrometerIdempotencyListener listener = new MicrometerIdempotencyListener(registry, true);
        listener.onRecovery(key, "charge", RecoveryAction.RETRYING, new IllegalStateException("provider down"));
        listener.onRecovery(key, "charge", RecoveryAction.RESUMED, null);
        listener.onRecovery(key, "refund", RecoveryAction.GAVE_UP, null);
        listener.onRecovery(key, "refund", RecoveryAction.REPORTED, null);
        assertThat(registry.get(MicrometerIdempotencyListener.RECOVERIES).tag("action", "resumed").tag("operation", "charge")
                .tag("scope", "tenant-1").counter().count()).isEqualTo(1);
        assertThat(registry.get(MicrometerIdempotencyListener.RECOVERIES).tag("action", "retrying").counter().count()).isEqualTo(1);
        assertThat(registry.get(MicrometerIdempotencyListener.RECOVERIES).tag("action", "gave_up").tag("operation", "refund")
                .counter().count()).isEqualTo(1);
        assertThat(registry.get(MicrometerIdempotencyListener.RECOVERIES).tag("action", "reported").counter().count()).isEqualTo(1);
    }

    /**
     * A chunk's error may carry no key (an empty chunk, or a first item whose key cannot be had): with
     * the scope tag on, it is still counted and timed, under scope "unknown", not lost to a
     * NullPointerException that the engine would only log.
     */
    @Test
    void anErrorWithoutAKeyIsCountedUnderAnUnknownScope() {
        MicrometerIdempotencyListener listener = new MicrometerIdempotencyListener(registry, true);
        listener.onError(null, new IllegalStateException("the chunk failed"), Duration.ofMillis(3));
        listener.onRetry(null, 1, new IllegalStateException("a conflict"), Duration.ofMillis(1));
        assertThat(registry.get(MicrometerIdempotencyListener.ERRORS).tag("scope", "unknown").counter().count()).isEqualTo(1);
        assertThat(registry.get(MicrometerIdempotencyListener.RETRIES).tag("scope", "unknown").counter().count()).isEqualTo(1);
        assertThat(registry.get(MicrometerIdempotencyListener.EXECUTIONS).tag("outcome", "error").timer().count()).isEqualTo(1);
    }
}
