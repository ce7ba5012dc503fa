package dev.idempotency;

import java.time.Duration;
import java.util.Optional;

/**
 * Where a {@link BatchJob} stands after a chunk committed: counts of items by outcome, the rate,
 * and the time left when the total is known. Immutable.
 *
 * @param chunks chunks committed so far
 * @param executed items whose work ran and was recorded
 * @param replayed items recorded before (an earlier run, or another worker), not run again
 * @param failed items whose final failure is recorded (now or before)
 * @param skipped items not run because their key is held by another worker past the lock timeout,
 *     or was used with another fingerprint; a later run of the job picks the held ones up
 * @param total the number of items, if known, or -1
 * @param elapsed the time since the job started
 */
public record JobProgress(long chunks, long executed, long replayed, long failed, long skipped, long total, Duration elapsed) {

    /** @return items handled so far */
    public long done() {
        return executed + replayed + failed + skipped;
    }

    /** @return items handled per second since the start */
    public double itemsPerSecond() {
        double seconds = elapsed.toNanos() / 1e9;
        return seconds <= 0 ? 0 : done() / seconds;
    }

    /** @return the time left at the current rate, if the total is known and the rate is not zero */
    public Optional<Duration> remaining() {
        double rate = itemsPerSecond();
        if (total < 0 || rate <= 0) {
            return Optional.empty();
        }
        return Optional.of(Duration.ofMillis((long) (Math.max(0, total - done()) / rate * 1000)));
    }

    /** @return whether this run executed nothing: every item was recorded before */
    public boolean nothingExecuted() {
        return executed == 0;
    }

    @Override
    public String toString() {
        return done() + (total >= 0 ? "/" + total : "") + " items: " + executed + " executed, " + replayed + " replayed, "
                + failed + " failed, " + skipped + " skipped, " + String.format(java.util.Locale.ROOT, "%.0f", itemsPerSecond())
                + " items/s" + remaining().map(r -> ", " + r.toSeconds() + " s left").orElse("");
    }
}
