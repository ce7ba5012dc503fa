package dev.idempotency.testkit;

import static dev.idempotency.testkit.StoreFixture.PURGE_BATCH;
import static dev.idempotency.testkit.StoreFixture.RETENTION;
import static dev.idempotency.testkit.StoreFixture.check;
import static dev.idempotency.testkit.StoreFixture.describe;
import static dev.idempotency.testkit.StoreFixture.receipts;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.Outcome;
import dev.idempotency.ResultCodecException;
import dev.idempotency.Work;
import dev.idempotency.testkit.Operations.Advance;
import dev.idempotency.testkit.Operations.AdvanceToExpiry;
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
import org.quicktheories.core.Gen;

/**
 * The stateful property of {@link StatefulContract}: the generated sequences of executions, clock
 * moves and purges, run on the fixture and compared after every step with the {@link Model}.
 *
 * @param <C> the store's transaction type
 */
final class ExecutionSequences<C> {

    private final StoreFixture<C> f;

    ExecutionSequences(StoreFixture<C> f) {
        this.f = f;
    }

    /**
     * Steps: executions (7 in 13) whose work returns a result of any type ({@link Results}), throws,
     * or fails finally; clock moves of 1 ms to past the retention (1 in 13), past the retention (1 in
     * 13), and to 1 ms before, exactly on, or 1 ms after a record's expiry (2 in 13); purges (2 in 13).
     */
    static Gen<Sequence> sequences() {
        Gen<Step> step = integers().between(0, 12).zip(integers().between(0, 2), integers().between(0, 3), integers().between(0, 4),
                integers().between(0, Integer.MAX_VALUE), (kind, key, fp, work, r) -> {
                    if (kind <= 6) {
                        WorkKind w = work <= 2 ? WorkKind.RETURNS : work == 3 ? WorkKind.THROWS_PLAIN : WorkKind.THROWS_FINAL;
                        return new Execute(key, fp == 3 ? 1 : 0, w, (r & 1) == 0, resultKind((r >>> 1) % 16));
                    }
                    if (kind == 7) {
                        return new Advance(clockMove(r >>> 5));
                    }
                    if (kind == 8) {
                        return new Advance(RETENTION.plusMinutes(1), true);
                    }
                    if (kind <= 10) {
                        return new AdvanceToExpiry(key, fp % 3 - 1);
                    }
                    return new Purge();
                });
        return lists().of(step).ofSizeBetween(1, 16).map(Sequence::new);
    }

    /** Strings 6 times in 16, each other kind once, the custom codec twice. */
    private static Results.Kind resultKind(int i) {
        Results.Kind[] others = {Results.Kind.NULL, Results.Kind.EMPTY_BYTES, Results.Kind.BYTES, Results.Kind.LARGE_BYTES, Results.Kind.INT,
            Results.Kind.LONG, Results.Kind.BOOLEAN, Results.Kind.UUID, Results.Kind.CUSTOM, Results.Kind.CUSTOM};
        return i < 6 ? Results.Kind.STRING : others[i - 6];
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
                    Model.Rec rec = model.record(Operations.KEYS.get(t.key()));
                    Instant target = rec == null ? null : rec.expiresAt().plusMillis(t.offsetMillis());
                    if (target != null && target.isAfter(f.clock.instant())) {
                        f.clock.set(target);
                    }
                } else {
                    int expected = model.expired(f.clock.instant());
                    int removed = f.purge(PURGE_BATCH);
                    model.purge(f.clock.instant());
                    if (removed != expected) {
                        throw new StepFailure(Promise.PURGE.broken("Purge removed " + removed + " records, but " + expected
                                + " had expired"), null);
                    }
                }
            } catch (StepFailure f) {
                throw new AssertionError(f.getMessage() + "\nat step " + n + " of this sequence:" + sequence, f.getCause());
            } catch (HookFailure h) {
                throw h;
            } catch (Exception | AssertionError e) {
                throw new AssertionError("Contract 3: execute must return an outcome or the work's own exception, but at step "
                        + n + " the store failed: " + e + "\nat step " + n + " of this sequence:" + sequence, e);
            }
        }
        for (IdempotencyKey key : Operations.KEYS) {
            try {
                probe(model, key);
            } catch (StepFailure f) {
                throw new AssertionError(f.getMessage() + "\nafter this sequence, executing key " + key
                        + " with fingerprint A in a transaction rolled back:" + sequence, f.getCause());
            } catch (Exception e) {
                throw new AssertionError("Contract 3: the store failed after this sequence: " + e + sequence, e);
            }
        }
    }

    private void execute(Model model, Execute step, int n) throws Exception {
        IdempotencyKey key = Operations.KEYS.get(step.key());
        Instant now = f.clock.instant();
        Model.Expectation expected = model.expect(key, step.fingerprint(), now);
        Object value = Results.value(step.result(), n);
        String label = Results.label(value);
        boolean custom = expected.runs() ? Results.custom(step.result()) : expected.record().custom();
        String failure = "final failure at step " + n;
        PlainFailure plain = new PlainFailure("plain failure at step " + n);
        AtomicInteger ran = new AtomicInteger();
        Work<Object, Exception> work = () -> {
            ran.incrementAndGet();
            switch (step.work()) {
                case RETURNS:
                    return value;
                case THROWS_PLAIN:
                    throw plain;
                default:
                    throw new FinalFailure(failure);
            }
        };
        C tx = f.open();
        Outcome<Object> outcome = null;
        Throwable thrown = null;
        try {
            outcome = StoreFixture.execute(f.idem, key, Operations.fingerprint(step.fingerprint()), tx, custom ? receipts() : null, work);
        } catch (Exception e) {
            thrown = e;
        }
        boolean commit = step.commits() && thrown == null && outcome.status() != Outcome.Status.IN_PROGRESS;
        if (commit) {
            f.commit(tx);
        } else {
            f.rollback(tx);
        }
        String seen = thrown != null ? "the exception " + thrown : describe(outcome);
        if (thrown instanceof ResultCodecException) {
            Promise why = expected.runs() ? expected.runReason() : ran.get() > 0 ? expected.expected() : Promise.RESULT;
            throw new StepFailure(why.broken("The engine could not decode what the store answered (" + thrown.getMessage() + "); "
                    + (expected.runs() ? "the work should have run" : "expected the record " + describeRecord(expected.record()))), thrown);
        }
        if (thrown == plain && plain.getSuppressed().length > 0) {
            throw new StepFailure(Promise.WORK_EXCEPTION.broken("Releasing the claim after the work threw failed: "
                    + plain.getSuppressed()[0]), plain.getSuppressed()[0]);
        }
        if (thrown != null && thrown != plain) {
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
                        model.committed(key, step.fingerprint(), false, label, now, n, custom);
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
                        model.committed(key, step.fingerprint(), true, failure, now, n);
                    } else {
                        model.rolledBack(key, Promise.ROLLBACK);
                    }
            }
            return;
        }
        compareWithRecord(model, key, expected, outcome, seen, ran.get(), now);
    }

    private void probe(Model model, IdempotencyKey key) throws Exception {
        Instant now = f.clock.instant();
        Model.Expectation expected = model.expect(key, 0, now);
        boolean custom = !expected.runs() && expected.record().custom();
        AtomicInteger ran = new AtomicInteger();
        Outcome<Object> outcome;
        try {
            outcome = f.inTxAny(key, Operations.fingerprint(0), custom ? receipts() : null, () -> {
                ran.incrementAndGet();
                return custom ? new Results.Receipt("probe") : "probe";
            }, false);
        } catch (ResultCodecException e) {
            Promise why = expected.runs() ? expected.runReason() : Promise.RESULT;
            throw new StepFailure(why.broken("The engine could not decode what the store answered (" + e.getMessage() + "); "
                    + (expected.runs() ? "the work should have run" : "expected the record " + describeRecord(expected.record()))), e);
        }
        String seen = describe(outcome);
        if (expected.runs()) {
            Promise why = diagnosis(model, key, outcome, now, expected.runReason());
            check(ran.get() == 1 && outcome.isExecuted(), why, "Expected the work to run, got " + seen);
        } else {
            compareWithRecord(model, key, expected, outcome, seen, ran.get(), now);
        }
    }

    private void compareWithRecord(Model model, IdempotencyKey key, Model.Expectation expected, Outcome<?> outcome, String seen,
                                   int ran, Instant now) {
        Model.Rec rec = expected.record();
        Promise p = expected.expected();
        check(ran == 0, p, "The work ran; the outcome was " + seen + "; the record holds " + describeRecord(rec));
        switch (p) {
            case MISMATCH:
                check(outcome instanceof Outcome.Mismatch, p, "Expected Mismatch, got " + seen);
                break;
            case FINAL_FAILURE:
                check(outcome instanceof Outcome.Failed<?> f && f.replayed() && rec.value().equals(f.errorMessage()), p,
                        "Expected the recorded failure '" + rec.value() + "' replayed, got " + seen);
                break;
            default:
                if (!(outcome instanceof Outcome.Replayed<?> r && rec.value().equals(Results.label(r.value())))) {
                    Promise why = diagnosis(model, key, outcome, now, p);
                    throw new StepFailure(why.broken("Expected Replayed(" + rec.value() + "), got " + seen), null);
                }
        }
    }

    private static Promise diagnosis(Model model, IdempotencyKey key, Outcome<?> outcome, Instant now, Promise fallback) {
        String value = outcome instanceof Outcome.Replayed<?> r ? Results.label(r.value())
                : outcome instanceof Outcome.Failed<?> f ? f.errorMessage() : null;
        Promise p = value == null ? null : model.diagnose(key, value, now);
        return p != null ? p : fallback;
    }

    private static String describeRecord(Model.Rec rec) {
        return (rec.failed() ? "failure '" : "value '") + rec.value() + "' with fingerprint " + Operations.FINGERPRINTS.get(rec.fingerprint())
                + " from step " + rec.step() + ", expiring at " + rec.expiresAt();
    }
}
