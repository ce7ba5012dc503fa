package dev.idempotency.benchmarks;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicReference;

/** The system clock moved forward by a settable offset, so that records can be made to expire. Thread-safe. */
final class OffsetClock implements InstantSource {

    private final AtomicReference<Duration> offset = new AtomicReference<>(Duration.ZERO);

    @Override
    public Instant instant() {
        return Instant.now().plus(offset.get());
    }

    /** @param by how far to move the clock forward */
    void advance(Duration by) {
        offset.updateAndGet(o -> o.plus(by));
    }
}
