package dev.idempotency.testkit;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A settable clock, supplied by {@link IdempotencyStoreContract} to the store and the engine under
 * test, so that retention and expiry are checked without waiting. It only moves when told to.
 *
 * <p>Thread-safe.
 */
public final class TestClock implements InstantSource {

    private final AtomicReference<Instant> now;

    /**
     * @param start the first instant it reports
     */
    public TestClock(Instant start) {
        this.now = new AtomicReference<>(Objects.requireNonNull(start, "start"));
    }

    @Override
    public Instant instant() {
        return now.get();
    }

    /**
     * Moves the clock forward.
     *
     * @param duration how far; zero or positive
     * @return the new current instant
     * @throws IllegalArgumentException if {@code duration} is negative
     */
    public Instant advance(Duration duration) {
        Objects.requireNonNull(duration, "duration");
        if (duration.isNegative()) {
            throw new IllegalArgumentException("a test clock only moves forward; duration was " + duration);
        }
        return now.updateAndGet(t -> t.plus(duration));
    }

    /**
     * Sets the current instant.
     *
     * @param instant the new current instant
     */
    public void set(Instant instant) {
        now.set(Objects.requireNonNull(instant, "instant"));
    }

    @Override
    public String toString() {
        return "TestClock[" + now.get() + "]";
    }
}
