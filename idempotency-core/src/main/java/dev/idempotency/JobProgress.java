package dev.idempotency;

import java.time.Duration;
import java.util.Optional;

/**
 * Where a {@link BatchJob} stands after a chunk committed: counts of items by outcome, the rate,
 * and the time left when the total is known. Every item counts once, under the {@link Outcome} its
 * chunk gave it. The counts are whole however large the job; which items failed, were held or
 * mismatched is in the job's {@link JobResult}. Immutable and thread-safe.
 *
 * @param chunks chunks committed so far
 * @param executed items whose work ran in this run and was recorded ({@link Outcome.Executed})
 * @param replayed items recorded before (an earlier run, or another worker), not run again
 *     ({@link Outcome.Replayed})
 * @param failed items whose final failure is recorded, in this run or before ({@link Outcome.Failed}):
 *     their work failed with an exception the key policy declares final, and a rerun replays the
 *     failure without running them
 * @param held items not run because another worker held their key past the lock timeout
 *     ({@link Outcome.InProgress}); nothing is recorded for them, and a later run of the job runs
 *     them (or replays them, once the other worker has recorded them)
 * @param mismatched items not run because their key was recorded with another fingerprint
 *     ({@link Outcome.Mismatch}): the item changed since its key was used; every rerun refuses it
 *     the same way
 * @param total the number of items, if known, or -1
 * @param elapsed the time since the job started
 */
public record JobProgress(long chunks, long executed, long replayed, long failed, long held, long mismatched, long total,
                          Duration elapsed) {

    /** @return items handled so far */
    public long done() {
        return executed + replayed + failed + held + mismatched;
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

    /**
     * @return whether this run executed nothing: every item was replayed, failed before, held or
     *     mismatched
     */
    public boolean nothingExecuted() {
        return executed == 0;
    }

    @Override
    public String toString() {
        return done() + (total >= 0 ? "/" + total : "") + " items: " + executed + " executed, " + replayed + " replayed, "
                + failed + " failed, " + held + " held, " + mismatched + " mismatched, "
                + String.format(java.util.Locale.ROOT, "%.0f", itemsPerSecond()) + " items/s"
                + remaining().map(r -> ", " + r.toSeconds() + " s left").orElse("");
    }
}
