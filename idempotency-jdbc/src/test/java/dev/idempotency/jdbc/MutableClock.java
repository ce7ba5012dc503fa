package dev.idempotency.jdbc;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicReference;

/** A settable clock for tests. Thread-safe. */
final class MutableClock implements InstantSource {
    private final AtomicReference<Instant> now;

    MutableClock(Instant start) {
        this.now = new AtomicReference<>(start);
    }

    @Override
    public Instant instant() {
        return now.get();
    }

    void set(Instant instant) {
        now.set(instant);
    }

    void advance(Duration d) {
        now.updateAndGet(t -> t.plus(d));
    }
}
