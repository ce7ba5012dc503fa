package dev.idempotency.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.StoreUnavailableException;
import dev.idempotency.micrometer.MicrometerIdempotencyListener;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.ConnectException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** A call run without deduplication reaches every listener of the context, and the metrics count it by the client's failure. */
class RunWithoutDeduplicationMetricsTest {

    @Test
    void everyListenerHearsItAndTheCounterCountsItByTheClientsException() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        List<IdempotencyKey> heard = new CopyOnWriteArrayList<>();
        IdempotencyListener other = new IdempotencyListener() {
            @Override
            public void onRunWithoutDeduplication(IdempotencyKey key, StoreUnavailableException unavailable) {
                heard.add(key);
            }
        };
        IdempotencyListener listeners = CompositeIdempotencyListener.of(List.of(new MicrometerIdempotencyListener(registry, true), other));
        IdempotencyKey key = IdempotencyKey.of("payments", "order-1");
        StoreUnavailableException unavailable = new StoreUnavailableException(key, "the store could not be reached",
                new ConnectException("Connection refused"), Duration.ofSeconds(1));

        listeners.onRunWithoutDeduplication(key, unavailable);
        listeners.onRunWithoutDeduplication(key, unavailable);

        assertThat(heard).containsExactly(key, key);
        assertThat(registry.get(MicrometerIdempotencyListener.WITHOUT_DEDUPLICATION).tag("error", "ConnectException")
                .tag("scope", "payments").counter().count()).isEqualTo(2.0);
    }
}
