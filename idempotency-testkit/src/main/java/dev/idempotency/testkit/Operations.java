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

    /** A step as it reads in a report. */
    interface Described {
        /**
         * @param step its number in the sequence, from 1
         * @return one line
         */
        String describe(int step);
    }

    /** One step of a sequence. */
    sealed interface Step extends Described permits Execute, Advance, Purge {
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
            return report(steps);
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

    // ---- lease mode ---------------------------------------------------------------------------------

    /** The keys of the lease property, by name; each sequence puts them in a scope of its own. */
    static final List<String> LEASE_KEYS = List.of("k1", "k2");
    /** The workers of the lease property: each claim is a new attempt of one of them, with a new owner token. */
    static final List<String> WORKERS = List.of("w1", "w2", "w3");
    /** In a fenced write, the worker index that stands for whoever owns the key's record, with that owner's token. */
    static final int HOLDER = 3;

    /** @return the name of a worker, or of {@link #HOLDER} */
    static String who(int worker) {
        return worker == HOLDER ? "the holder" : WORKERS.get(worker);
    }

    /** One step of a lease sequence, each primitive in a transaction of its own. */
    sealed interface LeaseStep extends Described permits ClaimLease, Checkpoint, CompleteLease, ReleaseLease, ExtendLease, RunOut {
    }

    /** A worker's new attempt claims the key with a live or a short lease, then commits or rolls back. */
    record ClaimLease(int key, int fingerprint, int worker, boolean live, boolean commit) implements LeaseStep {
        @Override
        public String describe(int step) {
            return String.format(Locale.ROOT, "%s claims %s fingerprint %s with a %s lease (token %s-%d), then %s", WORKERS.get(worker),
                    LEASE_KEYS.get(key), FINGERPRINTS.get(fingerprint), live ? "live" : "short", WORKERS.get(worker), step,
                    commit ? "commit" : "roll back");
        }
    }

    /** A worker records the recovery point {@code "p<step>"} with its latest token, then commits or rolls back. */
    record Checkpoint(int key, int worker, boolean commit) implements LeaseStep {
        @Override
        public String describe(int step) {
            return String.format(Locale.ROOT, "%s checkpoints %s with \"p%d\", then %s", who(worker), LEASE_KEYS.get(key), step,
                    commit ? "commit" : "roll back");
        }
    }

    /** A worker completes the key (or records a failure) with the result {@code "r<step>"}, with its latest token. */
    record CompleteLease(int key, int worker, boolean failed) implements LeaseStep {
        @Override
        public String describe(int step) {
            return String.format(Locale.ROOT, "%s completes %s as %s with \"r%d\"", who(worker), LEASE_KEYS.get(key),
                    failed ? "FAILED" : "COMPLETED", step);
        }
    }

    /** A worker releases its lease on the key, with its latest token. */
    record ReleaseLease(int key, int worker) implements LeaseStep {
        @Override
        public String describe(int step) {
            return who(worker) + " releases " + LEASE_KEYS.get(key);
        }
    }

    /** A worker extends its lease on the key to a live or a short one, with its latest token. */
    record ExtendLease(int key, int worker, boolean live) implements LeaseStep {
        @Override
        public String describe(int step) {
            return who(worker) + " extends its lease on " + LEASE_KEYS.get(key) + " to a " + (live ? "live" : "short") + " one";
        }
    }

    /** Lets every short lease run out. */
    record RunOut() implements LeaseStep {
        @Override
        public String describe(int step) {
            return "let the short leases run out";
        }
    }

    /** A generated lease sequence; its string form is the report, one step per line. */
    record LeaseSequence(List<LeaseStep> steps) {
        @Override
        public String toString() {
            return report(steps);
        }
    }

    /**
     * @param steps the steps
     * @return one numbered line per step
     */
    static String report(List<? extends Described> steps) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < steps.size(); i++) {
            s.append(String.format(Locale.ROOT, "%n  %2d. %s", i + 1, steps.get(i).describe(i + 1)));
        }
        return s.toString();
    }

    static String minutes(Duration d) {
        long m = d.toMinutes();
        return m % 60 == 0 ? (m / 60) + "h" : (m >= 60 ? (m / 60) + "h" + (m % 60) + "m" : m + "m");
    }
}
