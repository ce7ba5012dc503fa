package dev.idempotency.quarkus;

import dev.idempotency.IdempotencyListener;
import dev.idempotency.micrometer.MicrometerIdempotencyListener;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.arc.Arc;
import io.quarkus.arc.InstanceHandle;

/**
 * Quarkus' {@link MeterRegistry} (quarkus-micrometer's, which adds the application's registries to
 * it), looked up by the container rather than injected: no bean names Micrometer's types, so an
 * application without Micrometer builds, and this class is loaded only when Micrometer is there.
 */
final class QuarkusMeters {

    private QuarkusMeters() {
    }

    /** @return the Micrometer listener over Quarkus' registry, or {@link IdempotencyListener#NONE} without one */
    static IdempotencyListener listener(boolean scopeTag) {
        InstanceHandle<MeterRegistry> registry = Arc.container().instance(MeterRegistry.class);
        return registry.isAvailable() ? new MicrometerIdempotencyListener(registry.get(), scopeTag) : IdempotencyListener.NONE;
    }
}
