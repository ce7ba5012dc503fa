package dev.idempotency.testkit;

import static dev.idempotency.testkit.StoreFixture.PURGE_BATCH;
import static dev.idempotency.testkit.StoreFixture.RETENTION;
import static dev.idempotency.testkit.StoreFixture.check;
import static dev.idempotency.testkit.StoreFixture.describe;
import static dev.idempotency.testkit.StoreFixture.receipts;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import dev.idempotency.AbandonedClaimException;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.NestedKeyException;
import dev.idempotency.Outcome;
import dev.idempotency.ResultCodecException;
import dev.idempotency.Work;
import dev.idempotency.testkit.Operations.Advance;
import dev.idempotency.testkit.Operations.AdvanceToExpiry;
import dev.idempotency.testkit.Operations.During;
import dev.idempotency.testkit.Operations.Execute;
import dev.idempotency.testkit.Operations.Purge;
import dev.idempotency.testkit.Operations.Sequence;
import dev.idempotency.testkit.Operations.Step;
import dev.idempotency.testkit.Operations.WorkKind;
import dev.idempotency.testkit.StoreFixture.FinalFailure;
import dev.idempotency.testkit.StoreFixture.HookFailure;
import dev.idempotency.testkit.StoreFixture.PlainFailure;
import dev.idempotency.testkit.StoreFixture.StepFailure;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.quicktheories.core.Gen;

/**
 * The stateful property of {@link StatefulContract}: the generated sequences of executions, clock
 * moves and purges, run on the fixture and compared after every step with the {@link Model}.
 *
 * @param <C> the store's transaction type
 */
final class ExecutionSequences<C> {

    private final StoreFixture<C> f;
    private final List<IdempotencyKey> keys;

    ExecutionSequences(StoreFixture<C> f) {
        this.f = f;
        this.keys = Operations.keys(f.storeLimits);
    }

    /**
     * Steps: executions (7 in 13) of one of the keys of {@link Operations#keys} (the largest ones
     * among them), whose work returns a result of any type ({@link Results}, the largest the limit
     * allows among them), throws, or fails finally, and meanwhile may let the clock move, call its own
     * key again (nested), purge in its own transaction, or commit its own transaction; clock moves of
     * 1 ms to past the retention (1 in 13), past the retention (1 in 13), and to 1 ms before, exactly
     * on, or 1 ms after a record's expiry, or the end of the retention counted from its claim (2 in
     * 13); purges (2 in 13).
     */
    static Gen<Sequence> sequences() {
        Gen<Step> step = integers().between(0, 12).zip(integers().between(0, 5), integers().between(0, 3), integers().between(0, 4),
                integers().between(0, Integer.MAX_VALUE), (kind, key, fp, work, r) -> {
                    if (kind <= 6) {
                        WorkKind w = work <= 2 ? WorkKind.RETURNS : work == 3 ? WorkKind.THROWS_PLAIN : WorkKind.THROWS_FINAL;
                        During during = during((r >>> 9) % 16);
                        if (during == During.COMMITS_ITSELF) {
                            w = WorkKind.RETURNS;
                        }
                        Duration takes = during == During.CLOCK_MOVES ? workTime(r >>> 13) : Duration.ZERO;
                        return new Execute(key, fp == 3 ? 1 : 0, w, (r & 1) == 0, resultKind((r >>> 1) % 64), during, takes);
                    }
                    if (kind == 7) {
                        return new Advance(clockMove(r >>> 5));
                    }
                    if (kind == 8) {
                        return new Advance(RETENTION.plusMinutes(1), true);
                    }
                    if (kind <= 10) {
                        return new AdvanceToExpiry(key, fp % 3 - 1, (r & 2) != 0);
                    }
                    return new Purge();
                });
        return lists().of(step).ofSizeBetween(1, 16).map(Sequence::new);
    }

    /** Nothing 9 times in 16; the clock moves, a nested call, a purge, twice each; the work commits its transaction once. */
    private static During during(int i) {
        return i < 9 ? During.NOTHING : i < 11 ? During.CLOCK_MOVES : i < 13 ? During.NESTED : i < 15 ? During.PURGES
                : During.COMMITS_ITSELF;
    }

    /** How long a work takes: milliseconds, seconds or minutes, under the retention. */
    private static Duration workTime(int r) {
        int v = r / 3;
        switch (r % 3) {
            case 0:
                return Duration.ofMillis(1 + v % 999);
            case 1:
                return Duration.ofSeconds(1 + v % 59).plusMillis(v % 7);
            default:
                return Duration.ofMinutes(1 + v % 59).plusMillis(v % 7);
        }
    }

    /**
     * Strings 24 times in 64, each other kind 4 times, the custom codec 7 times, and the largest byte
     * array the limit allows once: a few large results (some eight at quick effort), as each costs its
     * store a megabyte's write and read.
     */
    private static Results.Kind resultKind(int i) {
        Results.Kind[] others = {Results.Kind.NULL, Results.Kind.EMPTY_BYTES, Results.Kind.BYTES, Results.Kind.LARGE_BYTES, Results.Kind.INT,
            Results.Kind.LONG, Results.Kind.BOOLEAN, Results.Kind.UUID, Results.Kind.CUSTOM, Results.Kind.CUSTOM};
        return i < 24 ? Results.Kind.STRING : i == 63 ? Results.Kind.LARGEST_BYTES : others[(i - 24) / 4];
    }

    /** A clock move: milliseconds, seconds, minutes, the retention to the millisecond (-1, 0, +1), or a little past it. */
    private static Duration clockMove(int r) {
        int v = r / 5;
        switch (r % 5) {
            case 0:
                return Duration.ofMillis(1 + v % 999);
            case 1:
                return Duration.ofSeconds(1 + v % 59);
            case 2:
                return Duration.ofMinutes(1 + v % 59);
            case 3:
                return RETENTION.plusMillis(v % 3 - 1);
            default:
                return RETENTION.plusMinutes(1 + v % 5);
        }
    }

    /** @return the first promise the sequence breaks, or {@code null} */
    AssertionError firstBroken(Sequence sequence) {
        try {
            runSteps(sequence);
            return null;
        } catch (AssertionError e) {
            return e;
        }
    }

    private void runSteps(Sequence sequence) {
        try {
            f.clean();
        } catch (Exception e) {
            throw new AssertionError("could not empty the store before a sequence: " + e, e);
        }
        Model model = new Model(RETENTION);
        List<Step> steps = sequence.steps();
        for (int i = 0; i < steps.size(); i++) {
            int n = i + 1;
            Step step = steps.get(i);
            try {
                if (step instanceof Execute e) {
                    execute(model, e, n);
                } else if (step instanceof Advance a) {
                    f.clock.advance(a.by());
                } else if (step instanceof AdvanceToExpiry t) {
                    Model.Rec rec = model.record(keys.get(t.key()));
                    Instant end = rec == null ? null : t.fromClaim() ? rec.claimedAt().plus(RETENTION) : rec.expiresAt();
                    Instant target = end == null ? null : end.plusMillis(t.offsetMillis());
                    if (target != null && target.isAfter(f.clock.instant())) {
                        f.clock.set(target);
                    }
                } else {
                    purge(model);
                }
            } catch (StepFailure f) {
                throw new AssertionError(f.getMessage() + "\nat step " + n + " of this sequence:" + sequence, f.getCause());
            } catch (HookFailure h) {
                throw h;
            } catch (Exception | AssertionError e) {
                Promise limit = step instanceof Execute x ? atTheLimits(x) : null;
                String failed = "at step " + n + " the store failed: " + e + "\nat step " + n + " of this sequence:" + sequence + legend(sequence);
                throw new AssertionError(limit != null ? limit.broken("Executing " + Keys.describe(keys.get(((Execute) step).key()))
                        + ", " + failed) : "Contract 3: execute must return an outcome or the work's own exception, but " + failed, e);
            }
        }
        for (int k = 0; k < keys.size(); k++) {
            IdempotencyKey key = keys.get(k);
            try {
                probe(model, key);
            } catch (StepFailure f) {
                throw new AssertionError(f.getMessage() + "\nafter this sequence, executing key " + Operations.KEY_NAMES.get(k)
                        + " with fingerprint A in a transaction rolled back:" + sequence + legend(sequence), f.getCause());
            } catch (Exception e) {
                String failed = "the store failed after this sequence, executing key " + Operations.KEY_NAMES.get(k) + ": " + e + sequence
                        + legend(sequence);
                throw new AssertionError(key.id().length() > 1 ? Promise.KEY_LIMITS.broken(failed) : "Contract 3: " + failed, e);
            }
        }
    }

    /**
     * Purges in a transaction of its own; commits it if the purge removed as many records as had
     * expired, else rolls it back and names the cause.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    private void purge(Model model) throws Exception {
        Instant now = f.clock.instant();
        int expected = model.expired(now);
        C tx = f.open();
        int removed;
        try {
            removed = f.idem.purgeExpired(tx, PURGE_BATCH);
        } catch (RuntimeException e) {
            f.rollbackQuietly(tx, e);
            throw e;
        }
        if (removed != expected) {
            f.rollback(tx);
            throw purgeMismatch(model, null, "Purge removed " + removed + " records, but " + expected + " had expired");
        }
        f.commit(tx);
        model.purge(now);
    }

    /**
     * A purge that removed more or fewer records than had expired, rolled back: if the store holds a
     * record whose expiry is not the model's, or counts an unexpired record as absent, the record
     * expired early (or late), which breaks the expiry; otherwise the purge itself is wrong.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    private StepFailure purgeMismatch(Model model, IdempotencyKey claimed, String what) throws Exception {
        Instant now = f.clock.instant();
        for (IdempotencyKey key : keys) {
            Model.Rec rec = model.record(key);
            if (rec == null || key.equals(claimed)) {
                continue;
            }
            dev.idempotency.spi.StoredRecord stored = f.committedRecord(key, Operations.fingerprint(rec.fingerprint()));
            boolean live = rec.expiresAt().isAfter(now);
            if (live && stored == null || stored != null && !rec.expiresAt().equals(stored.expiresAt())) {
                return new StepFailure(Promise.EXPIRY.broken(what + ": the record of " + Keys.describe(key) + ", "
                        + describeRecord(rec, now) + ", is " + (stored == null ? "absent in the store"
                        : "held by the store with the expiry " + stored.expiresAt()) + ". An expiry must be the completion's, to the"
                        + " millisecond"), null);
            }
        }
        return new StepFailure(Promise.PURGE.broken(what + " (now is " + now + ")"), null);
    }

    /** @return the promise of the limits that a failure of the store at {@code step} breaks, or {@code null} */
    private Promise atTheLimits(Execute step) {
        if (keys.get(step.key()).id().length() > 1) {
            return Promise.KEY_LIMITS;
        }
        return step.result() == Results.Kind.LARGEST_BYTES || step.result() == Results.Kind.LARGE_BYTES ? Promise.RESULT_SIZE : null;
    }

    private static String legend() {
        return "\n(" + Operations.LARGEST_KEYS + ")";
    }

    private static String legend(Sequence sequence) {
        return sequence.toString().contains("L/L") ? legend() : "";
    }

    private void execute(Model model, Execute step, int n) throws Exception {
        IdempotencyKey key = keys.get(step.key());
        Instant now = f.clock.instant();
        Model.Expectation expected = model.expect(key, step.fingerprint(), now);
        Object value = Results.value(step.result(), n, f.storeLimits.maxResultBytes());
        String label = Results.label(value);
        boolean custom = expected.runs() ? Results.custom(step.result()) : expected.record().custom();
        String failure = "final failure at step " + n;
        PlainFailure plain = new PlainFailure("plain failure at step " + n);
        AtomicInteger ran = new AtomicInteger();
        AtomicReference<StepFailure> during = new AtomicReference<>();
        AtomicReference<String> purgedWrongly = new AtomicReference<>();
        C tx = f.open();
        Work<Object, Exception> work = () -> {
            ran.incrementAndGet();
            switch (step.during()) {
                case CLOCK_MOVES:
                    f.clock.advance(step.takes());
                    break;
                case NESTED:
                    during.set(nested(key, step.fingerprint(), tx));
                    break;
                case PURGES:
                    int expect = model.expired(now, key);
                    int removed = f.idem.purgeExpired(tx, PURGE_BATCH);
                    if (removed != expect) {
                        purgedWrongly.set("A purge inside the work, in the transaction that claimed " + Keys.describe(key)
                                + " (in progress, expiring at " + now.plus(RETENTION) + "), removed " + removed + " records, but "
                                + expect + " of other keys had expired");
                        throw new IllegalStateException(purgedWrongly.get()); // undoes the claim and the purge
                    }
                    break;
                case COMMITS_ITSELF:
                    f.commit(tx);
                    break;
                default:
                    break;
            }
            switch (step.work()) {
                case RETURNS:
                    return value;
                case THROWS_PLAIN:
                    throw plain;
                default:
                    throw new FinalFailure(failure);
            }
        };
        Outcome<Object> outcome = null;
        Throwable thrown = null;
        try {
            outcome = StoreFixture.execute(f.idem, key, Operations.fingerprint(step.fingerprint()), tx, custom ? receipts() : null, work);
        } catch (Exception e) {
            thrown = e;
        }
        boolean endedByWork = step.during() == During.COMMITS_ITSELF && ran.get() > 0;
        boolean commit = step.commits() && thrown == null && outcome.status() != Outcome.Status.IN_PROGRESS;
        if (endedByWork) {
            // the work ended the transaction: nothing is left to end
        } else if (commit) {
            f.commit(tx);
        } else {
            f.rollback(tx);
        }
        Instant completedAt = f.clock.instant();
        if (during.get() != null) {
            throw during.get();
        }
        if (purgedWrongly.get() != null) {
            throw purgeMismatch(model, key, purgedWrongly.get());
        }
        String seen = thrown != null ? "the exception " + thrown : describe(outcome);
        if (thrown instanceof ResultCodecException) {
            Promise why = expected.runs() ? expected.runReason() : ran.get() > 0 ? expected.expected() : Promise.RESULT;
            throw new StepFailure(why.broken("The engine could not decode what the store answered (" + thrown.getMessage() + "); "
                    + (expected.runs() ? "the work should have run" : "expected the record " + describeRecord(expected.record(), now))), thrown);
        }
        if (thrown == plain && plain.getSuppressed().length > 0) {
            throw new StepFailure(Promise.WORK_EXCEPTION.broken("Releasing the claim after the work threw failed: "
                    + plain.getSuppressed()[0]), plain.getSuppressed()[0]);
        }
        boolean abandoned = thrown instanceof AbandonedClaimException;
        if (abandoned && endedByWork && expected.runs()) {
            model.committedInProgress(key, step.fingerprint(), now, n);
            return;
        }
        Promise limit = atTheLimits(step);
        if (thrown instanceof dev.idempotency.IdempotencyStoreException && limit != null) {
            throw new StepFailure(limit.broken("Executing " + Keys.describe(key) + (step.work() == WorkKind.RETURNS ? ", whose work returns "
                    + label : "") + ", the store failed: " + thrown), thrown);
        }
        if (thrown != null && thrown != plain && !(abandoned && !expected.runs())) {
            throw new StepFailure(Promise.WORK_EXCEPTION.broken("execute threw " + thrown), thrown);
        }
        if (expected.runs()) {
            Promise why = outcome != null ? diagnosis(model, key, outcome, now, expected.runReason()) : expected.runReason();
            if (ran.get() != 1) {
                throw new StepFailure(why.broken("The work should have run (" + why.tag() + "), but did not; the outcome was " + seen), null);
            }
            switch (step.work()) {
                case RETURNS:
                    check(outcome instanceof Outcome.Executed<Object> x && label.equals(Results.label(x.value())),
                            why, "Expected Executed(" + label + "), got " + seen);
                    if (step.result().unique()) {
                        model.origin(label, n, key, commit);
                    }
                    if (commit) {
                        if (step.during() == During.PURGES) {
                            model.purge(now, key);
                        }
                        model.committed(key, step.fingerprint(), false, label, now, completedAt, n, custom);
                    } else {
                        model.rolledBack(key, Promise.ROLLBACK);
                    }
                    break;
                case THROWS_PLAIN:
                    check(thrown == plain, Promise.WORK_EXCEPTION, "Expected the work's own exception, got " + seen);
                    model.rolledBack(key, Promise.WORK_EXCEPTION);
                    break;
                default:
                    check(outcome instanceof Outcome.Failed<Object> f && !f.replayed() && failure.equals(f.errorMessage()),
                            Promise.FINAL_FAILURE, "Expected a new recorded failure, got " + seen);
                    model.origin(failure, n, key, commit);
                    if (commit) {
                        model.committed(key, step.fingerprint(), true, failure, now, completedAt, n, false);
                    } else {
                        model.rolledBack(key, Promise.ROLLBACK);
                    }
            }
            return;
        }
        compareWithRecord(model, key, expected, outcome, thrown, seen, ran.get(), now);
    }

    /**
     * Inside the work of {@code key}: executes the same key again in the same transaction, with the
     * other fingerprint (Mismatch) and then with the same (InProgress, or NestedKeyException); neither
     * nested work may run.
     *
     * @return the broken promise, or {@code null}
     */
    private StepFailure nested(IdempotencyKey key, int fingerprint, C tx) {
        Promise p = Promise.MISMATCH_IN_PROGRESS;
        AtomicInteger nestedRuns = new AtomicInteger();
        Work<Object, RuntimeException> nestedWork = () -> {
            nestedRuns.incrementAndGet();
            return "nested";
        };
        String other;
        String same;
        try {
            other = describe(f.idem.execute(dev.idempotency.IdempotentCall.of(key, Operations.fingerprint(1 - fingerprint)), tx, nestedWork));
            try {
                same = describe(f.idem.execute(dev.idempotency.IdempotentCall.of(key, Operations.fingerprint(fingerprint)), tx, nestedWork));
            } catch (NestedKeyException ownClaim) {
                same = "IN_PROGRESS";
            }
        } catch (RuntimeException e) {
            return new StepFailure(p.broken("A nested call of " + Keys.describe(key) + " in the transaction that claimed it threw " + e), e);
        }
        if (nestedRuns.get() != 0 || !"MISMATCH".equals(other) || !"IN_PROGRESS".equals(same)) {
            return new StepFailure(p.broken("Nested calls of " + Keys.describe(key) + " in the transaction that claimed it, expected"
                    + " MISMATCH to the other fingerprint and IN_PROGRESS to the same, got " + other + " and " + same
                    + (nestedRuns.get() != 0 ? "; a nested work ran" : "")), null);
        }
        return null;
    }

    private void probe(Model model, IdempotencyKey key) throws Exception {
        Instant now = f.clock.instant();
        Model.Expectation expected = model.expect(key, 0, now);
        boolean custom = !expected.runs() && expected.record().custom();
        AtomicInteger ran = new AtomicInteger();
        Outcome<Object> outcome = null;
        Throwable thrown = null;
        try {
            outcome = f.inTxAny(key, Operations.fingerprint(0), custom ? receipts() : null, () -> {
                ran.incrementAndGet();
                return custom ? new Results.Receipt("probe") : "probe";
            }, false);
        } catch (ResultCodecException e) {
            Promise why = expected.runs() ? expected.runReason() : Promise.RESULT;
            throw new StepFailure(why.broken("The engine could not decode what the store answered (" + e.getMessage() + "); "
                    + (expected.runs() ? "the work should have run" : "expected the record " + describeRecord(expected.record(), now))), e);
        } catch (AbandonedClaimException e) {
            thrown = e;
        }
        String seen = thrown != null ? "the exception " + thrown : describe(outcome);
        if (expected.runs()) {
            Promise why = outcome == null ? expected.runReason() : diagnosis(model, key, outcome, now, expected.runReason());
            check(ran.get() == 1 && outcome != null && outcome.isExecuted(), why, "Expected the work to run, got " + seen);
        } else {
            compareWithRecord(model, key, expected, outcome, thrown, seen, ran.get(), now);
        }
    }

    private void compareWithRecord(Model model, IdempotencyKey key, Model.Expectation expected, Outcome<?> outcome, Throwable thrown,
                                   String seen, int ran, Instant now) {
        Model.Rec rec = expected.record();
        Promise p = expected.expected();
        if (ran != 0) {
            // The store answered as if there were no record: it expired early, or was lost.
            throw new StepFailure(Promise.EXPIRY.broken("The work ran, but the key has an unexpired record: " + describeRecord(rec, now)
                    + "; the store counted it as absent. The outcome was " + seen), null);
        }
        switch (p) {
            case MISMATCH_IN_PROGRESS:
                boolean same = expected.asked() == rec.fingerprint();
                check(same ? thrown instanceof AbandonedClaimException : outcome instanceof Outcome.Mismatch, p, "Expected "
                        + (same ? "AbandonedClaimException (the claim was committed without its result)" : "Mismatch") + " for "
                        + describeRecord(rec, now) + ", got " + seen);
                break;
            case MISMATCH:
                check(outcome instanceof Outcome.Mismatch, p, "Expected Mismatch, got " + seen);
                break;
            case FINAL_FAILURE:
                check(outcome instanceof Outcome.Failed<?> f && f.replayed() && rec.value().equals(f.errorMessage()), p,
                        "Expected the recorded failure '" + rec.value() + "' replayed, got " + seen);
                break;
            default:
                if (!(outcome instanceof Outcome.Replayed<?> r && rec.value().equals(Results.label(r.value())))) {
                    Promise why = outcome == null ? p : diagnosis(model, key, outcome, now, p);
                    throw new StepFailure(why.broken("Expected Replayed(" + rec.value() + "), got " + seen + "; the record holds "
                            + describeRecord(rec, now)), null);
                }
        }
    }

    private static Promise diagnosis(Model model, IdempotencyKey key, Outcome<?> outcome, Instant now, Promise fallback) {
        String value = outcome instanceof Outcome.Replayed<?> r ? Results.label(r.value())
                : outcome instanceof Outcome.Failed<?> f ? f.errorMessage() : null;
        Promise p = value == null ? null : model.diagnose(key, value, now);
        return p != null ? p : fallback;
    }

    /** @return the record, its times, and the current time beside them */
    private static String describeRecord(Model.Rec rec, Instant now) {
        String what = rec.inProgress() ? "a claim committed without its result" : (rec.failed() ? "failure '" : "value '") + rec.value() + "'";
        return what + " with fingerprint " + Operations.FINGERPRINTS.get(rec.fingerprint()) + " from step " + rec.step() + ", claimed at "
                + rec.claimedAt() + (rec.inProgress() ? "" : ", completed at " + rec.completedAt()) + ", expiring at " + rec.expiresAt()
                + " (now is " + now + ", " + Operations.duration(Duration.between(now, rec.expiresAt())) + " before its expiry)";
    }
}
