package dev.idempotency.testkit;

import static dev.idempotency.testkit.StoreFixture.A;
import static dev.idempotency.testkit.StoreFixture.RETENTION;
import static dev.idempotency.testkit.StoreFixture.SEED_PROPERTY;
import static dev.idempotency.testkit.StoreFixture.await;
import static dev.idempotency.testkit.StoreFixture.describe;
import static dev.idempotency.testkit.StoreFixture.promiseOf;
import static dev.idempotency.testkit.StoreFixture.seed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.Outcome;
import dev.idempotency.TransactionConflictException;
import dev.idempotency.spi.LeasingStore;
import dev.idempotency.testkit.Operations.Attempt;
import dev.idempotency.testkit.Operations.Round;
import dev.idempotency.testkit.Operations.Start;
import dev.idempotency.testkit.StoreFixture.FinalFailure;
import dev.idempotency.testkit.StoreFixture.HookFailure;
import dev.idempotency.testkit.StoreFixture.PlainFailure;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.quicktheories.core.Gen;

/**
 * The concurrency property of {@link ConcurrencyContract}: rounds of attempts from several threads,
 * checked against what each key's start allows; a failing round is run again with fewer threads.
 *
 * @param <C> the store's transaction type
 */
final class ConcurrentRounds<C> {

    private final StoreFixture<C> f;

    ConcurrentRounds(StoreFixture<C> f) {
        this.f = f;
    }

    void run() {
        Gen<Attempt> attempt = integers().between(0, 1).zip(integers().between(0, 3), integers().between(0, 5), integers().between(0, 2),
                (key, fp, fate, hold) -> new Attempt(key, fp == 3 ? 1 : 0, fate <= 2, hold, fate == 5));
        boolean leases = f.store instanceof LeasingStore;
        Gen<Start> start = integers().between(0, 9).map(i -> i <= 2 ? Start.ABSENT : i <= 5 ? Start.EXPIRED : i == 6 ? Start.COMPLETED
                : i == 7 ? Start.FAILED : leases ? Start.LEASED : Start.ABSENT);
        Gen<Round> rounds = start.zip(start, lists().of(attempt).ofSizeBetween(2, 6), (x, y, attempts) -> new Round(List.of(x, y), attempts));
        long seed = seed();
        try {
            f.runAtLeast(f.effort().concurrentRounds(), seed, rounds, this::runRound);
        } catch (AssertionError e) {
            Throwable failure = f.failureOf(e);
            throw new AssertionError(failure.getMessage() + "\n(random seed " + seed + "; thread scheduling varies, so a"
                    + " rerun with -D" + SEED_PROPERTY + "=" + seed + " may or may not fail again)", failure == e ? e : failure.getCause());
        }
        assertThat(f.examplesRun.get()).as("rounds run").isGreaterThanOrEqualTo(f.effort().concurrentRounds());
    }

    private record Result(Outcome<String> outcome, Throwable thrown, boolean ran, boolean committed) {
        String describe() {
            return (thrown != null ? "threw " + thrown : StoreFixture.describe(outcome))
                    + (ran ? ", work ran" : "") + (committed ? ", committed" : ", not committed");
        }
    }

    /** How often a smaller round is tried before it counts as passing: thread scheduling varies. */
    private static final int SHRINK_TRIES = 3;

    private void runRound(Round round) {
        f.examplesRun.incrementAndGet();
        AssertionError failure = roundFailure(round);
        if (failure == null) {
            return;
        }
        String promise = promiseOf(failure);
        Round smallest = round;
        boolean fewer = true;
        while (fewer && smallest.attempts().size() > 1) {
            fewer = false;
            for (int i = smallest.attempts().size() - 1; i >= 0 && !fewer; i--) {
                List<Attempt> attempts = new ArrayList<>(smallest.attempts());
                attempts.remove(i);
                Round candidate = new Round(smallest.starts(), attempts);
                for (int t = 0; t < SHRINK_TRIES && !fewer; t++) {
                    AssertionError again = roundFailure(candidate);
                    if (again != null && promiseOf(again).equals(promise)) {
                        smallest = candidate;
                        failure = again;
                        fewer = true;
                    }
                }
            }
        }
        f.lastFailure = new AssertionError(failure.getMessage() + "\n(the fewest threads found that still fail: "
                + smallest.attempts().size() + ", from a round of " + round.attempts().size() + ")", failure.getCause());
        throw f.lastFailure;
    }

    private AssertionError roundFailure(Round round) {
        try {
            checkRound(round);
            return null;
        } catch (HookFailure h) {
            throw h;
        } catch (AssertionError e) {
            return e;
        }
    }

    /**
     * Puts each key in its starting state, in transactions of their own, committed.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    private void setUp(Round round) throws Exception {
        List<Start> starts = round.starts();
        for (int k = 0; k < starts.size(); k++) {
            if (starts.get(k) == Start.LEASED) {
                f.leaseHeldFor(Operations.CONCURRENT_KEYS.get(k));
            }
        }
        if (starts.contains(Start.EXPIRED)) {
            for (int k = 0; k < starts.size(); k++) {
                if (starts.get(k) == Start.EXPIRED) {
                    f.inTx(f.idem, Operations.CONCURRENT_KEYS.get(k), A, () -> "old", true);
                }
            }
            f.clock.advance(RETENTION);
        }
        for (int k = 0; k < starts.size(); k++) {
            IdempotencyKey key = Operations.CONCURRENT_KEYS.get(k);
            if (starts.get(k) == Start.COMPLETED) {
                f.inTx(f.idem, key, A, () -> "s", true);
            } else if (starts.get(k) == Start.FAILED) {
                f.inTx(f.idem, key, A, () -> {
                    throw new FinalFailure("f");
                }, true);
            }
        }
    }

    private void checkRound(Round round) {
        try {
            f.clean();
            setUp(round);
        } catch (HookFailure h) {
            throw h;
        } catch (Exception | AssertionError e) {
            throw new AssertionError("Contract 3: could not set up a round (" + e + "):" + round, e);
        }
        List<Attempt> attempts = round.attempts();
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Result>> futures = new ArrayList<>();
        for (int i = 0; i < attempts.size(); i++) {
            Attempt a = attempts.get(i);
            String value = "t" + (i + 1);
            futures.add(f.threads.submit(() -> {
                go.await();
                return attempt(a, value);
            }));
        }
        Future<Integer> purge = f.threads.submit(() -> {
            go.await();
            try {
                return f.purge(StoreFixture.PURGE_BATCH);
            } catch (TransactionConflictException conflict) {
                return 0; // chosen as a deadlock's victim: it removed nothing
            }
        });
        go.countDown();
        List<Result> results = new ArrayList<>();
        for (Future<Result> f : futures) {
            results.add(await(Promise.AT_MOST_ONCE, f));
        }
        int removed = await(Promise.PURGE, purge);
        StringBuilder report = new StringBuilder();
        for (int k = 0; k < round.starts().size(); k++) {
            report.append(String.format("%n  key %s starts with %s", Operations.CONCURRENT_KEYS.get(k), round.starts().get(k).describe()));
        }
        for (int i = 0; i < results.size(); i++) {
            report.append(String.format("%n  %s%n      -> %s", attempts.get(i).describe(i + 1), results.get(i).describe()));
        }
        report.append(String.format("%n  and a purge, with them in a transaction of its own%n      -> removed %d", removed));
        long expired = round.starts().stream().filter(s -> s == Start.EXPIRED).count();
        if (removed > expired) {
            fail(Promise.PURGE.broken("A purge that ran with the round's attempts removed " + removed + " records, but only " + expired
                    + " had expired (the keys that started with a result expiring exactly then); the others were in progress, claimed"
                    + " by the round's open transactions or committed, or live, in this round:" + report));
        }
        Map<Integer, Integer> winner = new HashMap<>();
        for (int i = 0; i < results.size(); i++) {
            Result r = results.get(i);
            Attempt a = attempts.get(i);
            boolean ownFailure = r.thrown() instanceof PlainFailure pf && a.throwsPlain() && ("t" + (i + 1)).equals(pf.getMessage());
            if (r.thrown() != null && !ownFailure && !(r.thrown() instanceof TransactionConflictException)) {
                Promise p = a.throwsPlain() && r.ran() ? Promise.WORK_EXCEPTION : null;
                fail((p != null ? p.broken("The work threw, and the caller got another exception: " + r.thrown())
                        : "Contract 3: an attempt failed with " + r.thrown() + " instead of an outcome (or a TransactionConflictException)")
                        + " in this round:" + report, r.thrown());
            }
            Start start = round.starts().get(a.key());
            if (r.ran() && (start == Start.COMPLETED || start == Start.FAILED || start == Start.LEASED)) {
                Promise p = start == Start.COMPLETED ? Promise.REPLAY : start == Start.FAILED ? Promise.FINAL_FAILURE
                        : a.fingerprint() == 0 ? Promise.AT_MOST_ONCE : Promise.MISMATCH_IN_PROGRESS;
                fail(p.broken("Thread " + (i + 1) + " ran the work of key " + Operations.CONCURRENT_KEYS.get(a.key()) + ", which started with "
                        + start.describe() + ", in this round:" + report));
            }
            if (r.ran() && r.committed()) {
                Integer earlier = winner.put(a.key(), i);
                if (earlier != null) {
                    fail(Promise.AT_MOST_ONCE.broken("Key " + Operations.CONCURRENT_KEYS.get(a.key())
                            + " was executed in two committed transactions (threads " + (earlier + 1) + " and " + (i + 1)
                            + ") in this round:" + report));
                }
            }
        }
        for (int i = 0; i < results.size(); i++) {
            Result r = results.get(i);
            Attempt a = attempts.get(i);
            Start start = round.starts().get(a.key());
            if (r.outcome() == null) {
                continue;
            }
            String problem = start == Start.COMPLETED || start == Start.FAILED || start == Start.LEASED
                    ? startedProblem(start, a, r.outcome()) : absentProblem(attempts, winner.get(a.key()), a, r.outcome());
            if (problem != null) {
                Promise p = a.fingerprint() == 1 && start == Start.LEASED ? Promise.MISMATCH_IN_PROGRESS
                        : a.fingerprint() == 1 && start != Start.ABSENT && start != Start.EXPIRED ? Promise.MISMATCH
                        : start == Start.EXPIRED && "old".equals(r.outcome().valueOr(null)) ? Promise.EXPIRY
                        : start == Start.COMPLETED ? Promise.REPLAY : start == Start.FAILED ? Promise.FINAL_FAILURE : Promise.AT_MOST_ONCE;
                fail(p.broken("Thread " + (i + 1) + " " + problem + ", in this round:" + report));
            }
        }
        for (int k = 0; k < Operations.CONCURRENT_KEYS.size(); k++) {
            IdempotencyKey key = Operations.CONCURRENT_KEYS.get(k);
            Start start = round.starts().get(k);
            Integer w = winner.get(k);
            int fp = w == null ? 0 : attempts.get(w).fingerprint();
            Outcome<String> after;
            try {
                after = f.inTx(f.idem, key, Operations.fingerprint(fp), () -> "after", false);
            } catch (Exception e) {
                throw new AssertionError("Contract 3: the store failed after this round: " + e + report, e);
            }
            String expected = start == Start.COMPLETED ? "REPLAYED(s)" : start == Start.FAILED ? "FAILED(f, replayed)"
                    : start == Start.LEASED ? "IN_PROGRESS" : w == null ? "EXECUTED(after)" : "REPLAYED(t" + (w + 1) + ")";
            Promise p = start == Start.COMPLETED ? Promise.REPLAY : start == Start.FAILED ? Promise.FINAL_FAILURE
                    : start == Start.LEASED ? Promise.MISMATCH_IN_PROGRESS : w == null ? Promise.HOLDER_ROLLS_BACK : Promise.AT_MOST_ONCE;
            assertThat(describe(after)).as(p.broken("After this round, an attempt on key " + key + " with fingerprint "
                    + Operations.FINGERPRINTS.get(fp) + " must get " + expected + (w == null ? "" : " (thread " + (w + 1) + " executed and committed)")
                    + "; it got " + describe(after) + ". The round:" + report)).isEqualTo(expected);
        }
    }

    /** What is wrong with an outcome on a key that started with a record that stays; {@code null} if nothing. */
    private static String startedProblem(Start start, Attempt a, Outcome<String> o) {
        String expected = a.fingerprint() == 1 ? "MISMATCH" : start == Start.COMPLETED ? "REPLAYED(s)" : start == Start.FAILED
                ? "FAILED(f, replayed)" : "IN_PROGRESS";
        String got = describe(o);
        return expected.equals(got) ? null : "got " + got + " where the key's record must answer " + expected;
    }

    /** What is wrong with an outcome on a key that started without a live record; {@code null} if nothing. */
    private static String absentProblem(List<Attempt> attempts, Integer w, Attempt a, Outcome<String> o) {
        if (o instanceof Outcome.Replayed<String> replayed) {
            boolean fromWinner = w != null && ("t" + (w + 1)).equals(replayed.value());
            return fromWinner ? null : "replayed '" + replayed.value() + "', which no committed execution of its key in the round produced";
        }
        if (o instanceof Outcome.Mismatch) {
            return w != null && attempts.get(w).fingerprint() != a.fingerprint() ? null
                    : "got Mismatch, but no committed execution of its key had another fingerprint";
        }
        if (o instanceof Outcome.Failed) {
            return "got a recorded failure, but no work failed finally";
        }
        return null;
    }

    private Result attempt(Attempt a, String value) throws Exception {
        IdempotencyKey key = Operations.CONCURRENT_KEYS.get(a.key());
        AtomicInteger ran = new AtomicInteger();
        C tx = f.open();
        Outcome<String> outcome;
        try {
            outcome = f.idem.execute(IdempotentCall.of(key, Operations.fingerprint(a.fingerprint())), tx, () -> {
                ran.incrementAndGet();
                if (a.throwsPlain()) {
                    throw new PlainFailure(value);
                }
                return value;
            });
            if (a.hold() == 1) {
                Thread.yield();
            } else if (a.hold() == 2) {
                Thread.sleep(1);
            }
        } catch (Exception e) {
            f.rollbackQuietly(tx, e);
            return new Result(null, e, ran.get() > 0, false);
        }
        if (!a.commit() || outcome.status() == Outcome.Status.IN_PROGRESS) {
            f.rollback(tx);
            return new Result(outcome, null, ran.get() > 0, false);
        }
        try {
            f.commit(tx);
        } catch (Exception e) {
            return new Result(outcome, null, ran.get() > 0, false);
        }
        return new Result(outcome, null, ran.get() > 0, true);
    }
}
