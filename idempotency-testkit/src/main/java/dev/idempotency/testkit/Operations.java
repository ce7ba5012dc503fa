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

    /**
     * The keys of the stateful property, for {@code limits}: keys that differ by scope only, by the
     * case of the id only, by the case of the scope only, and two keys of the largest size that differ
     * in the last character of the id only. A store must keep them all apart.
     */
    static List<IdempotencyKey> keys(StoreLimits limits) {
        String scope = Keys.ofLength(limits.maxScopeLength(), 0);
        String id = Keys.ofLength(limits.maxIdLength(), 7);
        return List.of(IdempotencyKey.of("a", "k"), IdempotencyKey.of("a", "K"), IdempotencyKey.of("b", "k"), IdempotencyKey.of("A", "k"),
                IdempotencyKey.of(scope, id), IdempotencyKey.of(scope, Keys.otherLast(id)));
    }

    /** The keys as a report names them: the two largest are named by what they are, whatever the limits. */
    static final List<String> KEY_NAMES = List.of("a/k", "a/K", "b/k", "A/k", "L/L", "L/L'");

    /** What the report's names of the largest keys stand for. */
    static final String LARGEST_KEYS = "L/L is the largest key the limits allow, of every accepted character; L/L' the same with"
            + " another last character of its id";

    /** What a work does while it runs, besides returning or throwing. */
    enum During {
        /** Nothing. */
        NOTHING,
        /** The clock moves: the completion is later than the claim. */
        CLOCK_MOVES,
        /** The work executes its own key again, in its transaction, with the other fingerprint and then with its own. */
        NESTED,
        /** The work purges expired records, in the transaction that holds its claim. */
        PURGES,
        /** The work commits its own transaction: the claim is committed without its result (the work returns). */
        COMMITS_ITSELF;

        String describe(Duration takes) {
            switch (this) {
                case CLOCK_MOVES:
                    return ", the clock moving " + duration(takes) + " meanwhile,";
                case NESTED:
                    return ", after a nested call of its own key with each fingerprint,";
                case PURGES:
                    return ", after purging in its own transaction,";
                case COMMITS_ITSELF:
                    return ", after committing its own transaction,";
                default:
                    return "";
            }
        }
    }
    /** Fingerprint names; their digests are {@link #fingerprint(int)}. */
    static final List<String> FINGERPRINTS = List.of("A", "B");

    static Fingerprint fingerprint(int index) {
        return Fingerprint.of(FINGERPRINTS.get(index));
    }

    /** What the work does when it runs. */
    enum WorkKind {
        RETURNS, THROWS_PLAIN, THROWS_FINAL;

        String describe(int step, Results.Kind result) {
            switch (this) {
                case RETURNS:
                    return "work returns " + result.describe(step);
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
    sealed interface Step extends Described permits Execute, Advance, AdvanceToExpiry, Purge {
        /** @return simpler versions of this step, for shortening a failing sequence; none by default */
        default List<Step> simpler() {
            return List.of();
        }
    }

    /**
     * Opens a transaction, executes, then commits or rolls back. After a plain exception the
     * transaction is always rolled back, as contract 3.4 (docs/contract.md) tells the caller to.
     */
    record Execute(int key, int fingerprint, WorkKind work, boolean commit, Results.Kind result, During during, Duration takes)
            implements Step {
        Execute(int key, int fingerprint, WorkKind work, boolean commit, Results.Kind result) {
            this(key, fingerprint, work, commit, result, During.NOTHING, Duration.ZERO);
        }

        boolean commits() {
            return commit && work != WorkKind.THROWS_PLAIN && during != During.COMMITS_ITSELF;
        }

        @Override
        public String describe(int step) {
            String end = during == During.COMMITS_ITSELF ? "the transaction already ended" : commits() ? "then commit" : "then roll back";
            return String.format(Locale.ROOT, "execute key %-4s fingerprint %s  %-32s %s", KEY_NAMES.get(key), FINGERPRINTS.get(fingerprint),
                    work.describe(step, result) + during.describe(takes), end);
        }

        /** The same step doing nothing more while it runs, and returning a string. */
        @Override
        public List<Step> simpler() {
            List<Step> simpler = new java.util.ArrayList<>();
            if (during != During.NOTHING) {
                simpler.add(new Execute(key, fingerprint, work, commit, result));
            }
            if (result != Results.Kind.STRING && work == WorkKind.RETURNS) {
                simpler.add(new Execute(key, fingerprint, work, commit, Results.Kind.STRING, during, takes));
            }
            return simpler;
        }
    }

    /** Moves the clock forward. */
    record Advance(Duration by, boolean pastRetention) implements Step {
        Advance(Duration by) {
            this(by, false);
        }

        @Override
        public String describe(int step) {
            return "advance the clock by " + duration(by) + (pastRetention ? " (past the retention)" : "");
        }

        /** Half the move, and a millisecond. */
        @Override
        public List<Step> simpler() {
            return by.toMillis() <= 1 ? List.of() : List.of(new Advance(Duration.ofMillis(1)), new Advance(by.dividedBy(2)));
        }
    }

    /**
     * Moves the clock to the expiry of a key's committed record: 1 ms before it, exactly on it, or
     * 1 ms after it. That is the boundary of expiry and of purge, to the millisecond. Does nothing if
     * the key has no record or that instant has passed.
     */
    record AdvanceToExpiry(int key, int offsetMillis, boolean fromClaim) implements Step {
        AdvanceToExpiry(int key, int offsetMillis) {
            this(key, offsetMillis, false);
        }

        @Override
        public String describe(int step) {
            String where = offsetMillis == 0 ? "exactly to" : offsetMillis < 0 ? -offsetMillis + " ms before" : offsetMillis + " ms after";
            return "advance the clock " + where + (fromClaim ? " the retention's end counted from the claim of " : " the expiry of ")
                    + KEY_NAMES.get(key) + "'s record";
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
    record Attempt(int key, int fingerprint, boolean commit, int hold, boolean throwsPlain) {
        Attempt(int key, int fingerprint, boolean commit, int hold) {
            this(key, fingerprint, commit, hold, false);
        }

        String describe(int thread) {
            return String.format(Locale.ROOT, "thread %d: execute key %s fingerprint %s, %s, then %s", thread,
                    CONCURRENT_KEYS.get(key), FINGERPRINTS.get(fingerprint),
                    throwsPlain ? "work throws a plain exception" : "work returns \"t" + thread + "\"",
                    commit && !throwsPlain ? "commit" : "roll back");
        }
    }

    /** The state a key is in when a concurrency round starts. */
    enum Start {
        /** No record. */
        ABSENT,
        /** A committed result {@code "s"} of fingerprint A. */
        COMPLETED,
        /** A committed result of fingerprint A whose retention ran out exactly now. */
        EXPIRED,
        /** A recorded final failure of fingerprint A. */
        FAILED,
        /** A committed lease claim of fingerprint A whose lease has not ended (a {@code LeasingStore} only). */
        LEASED;

        String describe() {
            switch (this) {
                case ABSENT:
                    return "no record";
                case COMPLETED:
                    return "a committed result \"s\" of fingerprint A";
                case EXPIRED:
                    return "a result \"old\" of fingerprint A that expires exactly now";
                case FAILED:
                    return "a recorded final failure of fingerprint A";
                default:
                    return "a live lease of fingerprint A (in progress, committed)";
            }
        }
    }

    /** The keys of the concurrency property: two, so that attempts overlap often. */
    static final List<IdempotencyKey> CONCURRENT_KEYS = List.of(IdempotencyKey.of("c", "x"), IdempotencyKey.of("c", "y"));

    /** A round of concurrent attempts. */
    record Round(List<Start> starts, List<Attempt> attempts) {
        Round(List<Attempt> attempts) {
            this(List.of(Start.ABSENT, Start.ABSENT), attempts);
        }

        @Override
        public String toString() {
            StringBuilder s = new StringBuilder();
            for (int k = 0; k < starts.size(); k++) {
                s.append(String.format(Locale.ROOT, "%n  key %s starts with %s", CONCURRENT_KEYS.get(k), starts.get(k).describe()));
            }
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
    sealed interface LeaseStep extends Described permits ClaimLease, Checkpoint, CompleteLease, ReleaseLease, ExtendLease, RunOut,
            PurgeLeases {
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

    /** Purges in a transaction of its own, committed, at the store's own now: none of the sequence's records has expired. */
    record PurgeLeases() implements LeaseStep {
        @Override
        public String describe(int step) {
            return "purge expired records at the store's now";
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

    /** @return a duration as it reads in a report: 1h1m, 20m, 59.5s, 1h0m0.001s, 7ms */
    static String duration(Duration d) {
        if (d.toMillisPart() == 0 && d.toSecondsPart() == 0) {
            return minutes(d);
        }
        if (d.compareTo(Duration.ofSeconds(1)) < 0) {
            return d.toMillis() + "ms";
        }
        String seconds = d.toSecondsPart() + (d.toMillisPart() == 0 ? "" : String.format(Locale.ROOT, ".%03d", d.toMillisPart())) + "s";
        return (d.toHours() > 0 ? d.toHours() + "h" + d.toMinutesPart() + "m" : d.toMinutes() > 0 ? d.toMinutes() + "m" : "") + seconds;
    }

    static String minutes(Duration d) {
        long m = d.toMinutes();
        return m % 60 == 0 ? (m / 60) + "h" : (m >= 60 ? (m / 60) + "h" + (m % 60) + "m" : m + "m");
    }
}
