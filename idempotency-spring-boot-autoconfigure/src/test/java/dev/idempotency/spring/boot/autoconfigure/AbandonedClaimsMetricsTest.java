package dev.idempotency.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyListener;
import dev.idempotency.micrometer.MicrometerIdempotencyListener;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The abandoned claims a purge deleted reach every listener of the context, and the metrics add them up. */
class AbandonedClaimsMetricsTest {

    @Test
    void everyListenerHearsThemAndTheCounterAddsThemUp() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        List<Integer> heard = new CopyOnWriteArrayList<>();
        IdempotencyListener other = new IdempotencyListener() {
            @Override
            public void onAbandonedClaimsPurged(int count) {
                heard.add(count);
            }
        };
        IdempotencyListener listeners = CompositeIdempotencyListener.of(List.of(new MicrometerIdempotencyListener(registry, true), other));

        listeners.onAbandonedClaimsPurged(2);
        listeners.onAbandonedClaimsPurged(3);

        assertThat(heard).containsExactly(2, 3);
        assertThat(registry.get(MicrometerIdempotencyListener.ABANDONED_CLAIMS).counter().count()).isEqualTo(5.0);
    }
}
