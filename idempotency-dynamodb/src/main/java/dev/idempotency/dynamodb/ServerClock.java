package dev.idempotency.dynamodb;

import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * An estimate of a DynamoDB server's clock, from the {@code Date} header of its responses.
 *
 * <p>A condition expression has no "now" of the server's own, so the store writes and compares
 * times that it computes. This clock bounds the server's time from below and above, never trusting
 * the application's wall clock: each response whose request was sent at local time {@code t0} and
 * answered at {@code t1} with {@code Date: D} (whole seconds, the server's time truncated) says that
 * at some local instant in {@code [t0, t1]} the server's time was in {@code [D, D + 1 s + lag)}, so
 * the offset from the local monotonic clock to the server's lies in
 * {@code [D - t1, D + 1 s + lag - t0]}. The bounds of every response are intersected: a response
 * whose server time fell just after a second began raises the lower bound, one just before lowers
 * the upper bound, and {@link #calibrate} sends probes timed to fall on the predicted second
 * boundary, halving the interval each time down to about the round trip plus the lag. The bounds
 * then widen by {@link #DRIFT_PPM} parts per million of the time since their response, for the drift
 * between the two clocks. Bounds that contradict each other (a clock stepped) are dropped for the
 * newest response's.
 *
 * <p>The local time is {@link System#nanoTime()}, which no change of the wall clock moves: a node
 * hours ahead or behind estimates the same server time.
 *
 * <p>Thread-safe: every method is synchronized on the clock.
 */
final class ServerClock {

    /** The drift assumed between the local monotonic clock and the server's, in parts per million. */
    static final long DRIFT_PPM = 100;

    private static final long SECOND_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Calibration stops after this many probes in a row that narrowed the estimate by less than a millisecond. */
    private static final int STALLED_PROBES = 3;

    private final long lagNanos;
    // Offsets from local nanos to the server's epoch nanos, and the local time of the response each came from.
    private boolean known;
    private long low;
    private long lowAt;
    private long high;
    private long highAt;
    private long contradictions;
    private boolean calibrated;

    /** @param lag how late the server's {@code Date} may be behind its own clock (a cached header) */
    ServerClock(Duration lag) {
        this.lagNanos = lag.toNanos();
    }

    /** @return the local monotonic time, in nanoseconds */
    static long localNanos() {
        return System.nanoTime();
    }

    /**
     * Takes in one response.
     *
     * @param sentAt local time before the request was sent
     * @param receivedAt local time after its response came
     * @param dateHeader the response's {@code Date} header, if it had one
     */
    void observe(long sentAt, long receivedAt, Optional<String> dateHeader) {
        Optional<Instant> date = dateHeader.flatMap(ServerClock::parse);
        if (date.isEmpty()) {
            return;
        }
        long d = date.get().getEpochSecond() * SECOND_NANOS + date.get().getNano();
        long newLow = d - receivedAt;
        long newHigh = d + SECOND_NANOS + lagNanos - sentAt;
        synchronized (this) {
            if (!known) {
                set(newLow, receivedAt, newHigh, sentAt);
                return;
            }
            long now = receivedAt;
            long currentLow = low - drift(now - lowAt);
            long currentHigh = high + drift(now - highAt);
            if (newLow > currentHigh || newHigh < currentLow) {
                contradictions++;
                set(newLow, receivedAt, newHigh, sentAt);
                return;
            }
            if (newLow >= currentLow) {
                low = newLow;
                lowAt = receivedAt;
            }
            if (newHigh <= currentHigh) {
                high = newHigh;
                highAt = sentAt;
            }
        }
    }

    private void set(long newLow, long newLowAt, long newHigh, long newHighAt) {
        known = true;
        low = newLow;
        lowAt = newLowAt;
        high = newHigh;
        highAt = newHighAt;
    }

    private static long drift(long elapsed) {
        return Math.max(0, elapsed) / 1_000_000 * DRIFT_PPM;
    }

    /** @return whether any response has been taken in */
    synchronized boolean known() {
        return known;
    }

    /**
     * The server's time now, as bounds in epoch milliseconds: the earliest it can be and the
     * latest, each rounded outwards.
     *
     * @return the window; {@link #known()} must be true
     */
    Window now() {
        return now(localNanos());
    }

    /** As {@link #now()}, at the local time {@code local}. */
    synchronized Window now(long local) {
        if (!known) {
            throw new IllegalStateException("no response of the server has been seen yet");
        }
        long earliest = local + low - drift(local - lowAt);
        long latest = local + high + drift(local - highAt);
        return new Window(Math.floorDiv(earliest, 1_000_000), -Math.floorDiv(-latest, 1_000_000));
    }

    /** @return how wide the estimate is now: latest minus earliest; a second or more before the first probes */
    synchronized Duration uncertainty() {
        Window w = now();
        return Duration.ofMillis(w.latest() - w.earliest());
    }

    /** @return how many times the responses contradicted the estimate, which then started anew */
    synchronized long contradictions() {
        return contradictions;
    }

    /**
     * Sends probes until the estimate is no wider than {@code target}, or three probes in a row
     * narrowed it by less than a millisecond (the round trip bounds it), or {@code budget} has
     * passed: each probe is sent so that it reaches the server when the middle of the estimate
     * says the server's second changes.
     *
     * @param probe sends one request, which reports to {@link #observe}
     * @param target the width to reach
     * @param budget how long to try
     * @throws InterruptedException if interrupted while waiting for a probe's time
     */
    void calibrate(Runnable probe, Duration target, Duration budget) throws InterruptedException {
        long deadline = localNanos() + budget.toNanos();
        if (!known()) {
            probe.run();
        }
        long roundTrip = 0;
        int stalled = 0;
        Duration before = uncertainty();
        while (before.compareTo(target) > 0 && stalled < STALLED_PROBES && localNanos() < deadline) {
            long middle;
            synchronized (this) {
                long local = localNanos();
                middle = ((local + low) + (local + high)) / 2 - local;
            }
            long serverNow = localNanos() + middle;
            long tick = (Math.floorDiv(serverNow, SECOND_NANOS) + 1) * SECOND_NANOS;
            long sendAt = tick - middle - roundTrip / 2;
            long wait = sendAt - localNanos();
            if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(wait);
            }
            long sent = localNanos();
            probe.run();
            roundTrip = localNanos() - sent;
            Duration after = uncertainty();
            stalled = before.minus(after).toMillis() >= 1 ? 0 : stalled + 1;
            before = after;
        }
        synchronized (this) {
            calibrated = true;
        }
    }

    /** @return whether {@link #calibrate} has run to its end: to the target, or as far as probes narrow it */
    synchronized boolean calibrated() {
        return calibrated;
    }

    private static Optional<Instant> parse(String header) {
        try {
            return Optional.of(ZonedDateTime.parse(header.strip(), DateTimeFormatter.RFC_1123_DATE_TIME).toInstant());
        } catch (DateTimeParseException e) {
            return Optional.empty();
        }
    }

    @Override
    public synchronized String toString() {
        return known ? "ServerClock[uncertainty " + uncertainty().toMillis() + " ms]" : "ServerClock[no response yet]";
    }

    /**
     * The server's time, bounded.
     *
     * @param earliest the earliest it can be, epoch milliseconds
     * @param latest the latest it can be, epoch milliseconds
     */
    record Window(long earliest, long latest) {
    }
}
