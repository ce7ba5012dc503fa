package dev.idempotency.testkit;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/** The operations of the stateful and concurrency properties, and how they read in a report. */
final class Operations {

    private Operations() {
    }

    /** Keys that differ by scope only, and by case only: a store must keep all three apart. */
    static final List<IdempotencyKey> KEYS = List.of(IdempotencyKey.of("a", "k"), IdempotencyKey.of("a", "K"), IdempotencyKey.of("b", "k"));
    /** Fingerprint names; their digests are {@link #fingerprint(int)}. */
    static final List<String> FINGERPRINTS = List.of("A", "B");

    static Fingerprint fingerprint(int index) {
        return Fingerprint.of(FINGERPRINTS.get(index));
    }

    /** What the work does when it runs. */
    enum WorkKind {
        RETURNS, THROWS_PLAIN, THROWS_FINAL;

        String describe(int step) {
            switch (this) {
                case RETURNS:
                    return "work returns \"v" + step + "\"";
                case THROWS_PLAIN:
                    return "work throws a plain exception";
                default:
                    return "work throws a final failure";
            }
        }
    }

    /** One step of a sequence. */
    sealed interface Step permits Execute, Advance, Purge {
        String describe(int step);
    }

    /**
     * Opens a transaction, executes, then commits or rolls back. After a plain exception the
     * transaction is always rolled back, as CONTRACT 3.4 tells the caller to.
     */
    record Execute(int key, int fingerprint, WorkKind work, boolean commit) implements Step {
        boolean commits() {
            return commit && work != WorkKind.THROWS_PLAIN;
        }

        @Override
        public String describe(int step) {
            return String.format(Locale.ROOT, "execute key %-4s fingerprint %s  %-32s then %s", KEYS.get(key), FINGERPRINTS.get(fingerprint),
                    work.describe(step), commits() ? "commit" : "roll back");
        }
    }

    /** Moves the clock forward. */
    record Advance(Duration by, boolean pastRetention) implements Step {
        @Override
        public String describe(int step) {
            return "advance the clock by " + minutes(by) + (pastRetention ? " (past the retention)" : "");
        }
    }

    /** Purges expired records in a transaction of its own, committed. */
    record Purge() implements Step {
        @Override
        public String describe(int step) {
            return "purge expired records";
        }
    }

    /** A generated sequence; its string form is the report a store author reads, one step per line. */
    record Sequence(List<Step> steps) {
        @Override
        public String toString() {
            StringBuilder s = new StringBuilder();
            for (int i = 0; i < steps.size(); i++) {
                s.append(String.format(Locale.ROOT, "%n  %2d. %s", i + 1, steps.get(i).describe(i + 1)));
            }
            return s.toString();
        }
    }

    /** One attempt of a concurrency round, run in a thread and a transaction of its own. */
    record Attempt(int key, int fingerprint, boolean commit, int hold) {
        String describe(int thread) {
            return String.format(Locale.ROOT, "thread %d: execute key %s fingerprint %s, work returns \"t%d\", then %s", thread,
                    CONCURRENT_KEYS.get(key), FINGERPRINTS.get(fingerprint), thread, commit ? "commit" : "roll back");
        }
    }

    /** The keys of the concurrency property: two, so that attempts overlap often. */
    static final List<IdempotencyKey> CONCURRENT_KEYS = List.of(IdempotencyKey.of("c", "x"), IdempotencyKey.of("c", "y"));

    /** A round of concurrent attempts. */
    record Round(List<Attempt> attempts) {
        @Override
        public String toString() {
            StringBuilder s = new StringBuilder();
            for (int i = 0; i < attempts.size(); i++) {
                s.append(String.format(Locale.ROOT, "%n  %s", attempts.get(i).describe(i + 1)));
            }
            return s.toString();
        }
    }

    static String minutes(Duration d) {
        long m = d.toMinutes();
        return m % 60 == 0 ? (m / 60) + "h" : (m >= 60 ? (m / 60) + "h" + (m % 60) + "m" : m + "m");
    }
}
