package dev.idempotency.testkit;

import static dev.idempotency.testkit.StoreFixture.check;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.TxWork;
import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.LeasedCompletion;
import dev.idempotency.spi.LeasingStore;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.RecoveryPoint;
import dev.idempotency.spi.StoredRecord;
import dev.idempotency.testkit.StoreFixture.StepFailure;
import dev.idempotency.testkit.Model.ClaimExpectation;
import dev.idempotency.testkit.Model.Lease;
import dev.idempotency.testkit.Operations.Checkpoint;
import dev.idempotency.testkit.Operations.ClaimLease;
import dev.idempotency.testkit.Operations.CompleteLease;
import dev.idempotency.testkit.Operations.ExtendLease;
import dev.idempotency.testkit.Operations.LeaseSequence;
import dev.idempotency.testkit.Operations.LeaseStep;
import dev.idempotency.testkit.Operations.ReleaseLease;
import dev.idempotency.testkit.Operations.PurgeLeases;
import dev.idempotency.testkit.Operations.RunOut;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.quicktheories.core.Gen;

/**
 * The stateful property of lease mode: random sequences of lease primitives by several workers on
 * two keys, each primitive in a transaction of its own, every answer compared with the
 * {@link Model}. Each sequence uses keys in a scope of its own.
 *
 * @param <C> the store's transaction type
 */
final class LeaseSequences<C> {

    /** The codec name of every recovery point and result the property writes. */
    static final String CODEC = "contract-codec";

    private final StoreFixture<C> contract;
    private final LeasingStore<C> store;
    private final AtomicInteger runs = new AtomicInteger();

    LeaseSequences(StoreFixture<C> contract, LeasingStore<C> store) {
        this.contract = contract;
        this.store = store;
    }

    /**
     * Claims (live or short, committed or rolled back), checkpoints, completions, releases, extensions
     * run-outs and purges at the store's now, three in four on the first key. A fenced write comes from one of the workers or, as
     * often, from {@link Operations#HOLDER}, whoever owns the key's record, so that the holder's writes
     * are frequent. For a store without transactions ({@code transactions} false) every step commits:
     * there is nothing to roll back.
     */
    static Gen<LeaseSequence> sequences(boolean transactions) {
        Gen<LeaseStep> step = integers().between(0, 10).zip(integers().between(0, 3), integers().between(0, 5), integers().between(0, 15),
                (kind, k, w, bits) -> {
                    int key = k == 3 ? 1 : 0;
                    int who = Math.min(w, Operations.HOLDER);
                    int fingerprint = (bits & 3) == 3 ? 1 : 0;
                    boolean flag = (bits & 4) != 0;
                    boolean commit = !transactions || (bits & 8) == 0 || (bits & 1) == 0;
                    switch (kind) {
                        case 3: case 4:
                            return new Checkpoint(key, who, commit);
                        case 5:
                            return new CompleteLease(key, who, flag && fingerprint == 1);
                        case 6:
                            return new ReleaseLease(key, who);
                        case 7:
                            return new ExtendLease(key, who, flag);
                        case 8:
                            return new RunOut();
                        case 10:
                            return new PurgeLeases();
                        default:
                            return new ClaimLease(key, fingerprint, who % Operations.WORKERS.size(), flag, commit);
                    }
                });
        return lists().of(step).ofSizeBetween(1, 16).map(LeaseSequence::new);
    }

    /** @return the broken promise found by running {@code steps} on an empty store, or {@code null} */
    AssertionError firstBroken(List<LeaseStep> steps) {
        try {
            run(steps);
            return null;
        } catch (AssertionError e) {
            return e;
        }
    }

    private void run(List<LeaseStep> steps) {
        try {
            contract.clean();
        } catch (Exception e) {
            throw new AssertionError("could not empty the store before a lease sequence: " + e, e);
        }
        Run run = new Run("lease-seq-" + runs.incrementAndGet());
        for (int i = 0; i <= steps.size(); i++) {
            int n = i + 1;
            try {
                if (i < steps.size()) {
                    run.step(steps.get(i), n);
                } else {
                    for (int k = 0; k < Operations.LEASE_KEYS.size(); k++) {
                        run.claim(new ClaimLease(k, 0, 0, true, false), "probe-" + k);
                    }
                }
            } catch (StepFailure f) {
                throw new AssertionError(f.getMessage() + "\n" + where(i, steps) + Operations.report(steps), f.getCause());
            } catch (Exception | AssertionError e) {
                throw new AssertionError("Contract 4: every lease primitive must give an answer, but the store failed: " + e + "\n"
                        + where(i, steps) + Operations.report(steps), e);
            }
        }
    }

    private static String where(int i, List<LeaseStep> steps) {
        return i < steps.size() ? "at step " + (i + 1) + " of this lease sequence:"
                : "after this lease sequence, claiming each key with fingerprint A, a live lease and a rolled-back transaction:";
    }

    /** One run of a sequence: its model and the workers' latest owner tokens. */
    private final class Run {
        private final String scope;
        private final Model model = new Model(StoreFixture.RETENTION);
        private final Map<String, String> tokens = new HashMap<>();
        /** The store's now, as its latest claim answered; {@code null} before the first. */
        private Instant storeNow;

        Run(String scope) {
            this.scope = scope;
        }

        void step(LeaseStep step, int n) throws Exception {
            if (step instanceof ClaimLease c) {
                String token = Operations.WORKERS.get(c.worker()) + "-" + n;
                tokens.put(c.worker() + "/" + c.key(), token);
                claim(c, token);
            } else if (step instanceof Checkpoint c) {
                String value = "p" + n;
                fenced(c.key(), c.worker(), "checkpoint " + value, Promise.RECOVERY_POINT, c.commit(),
                        (tx, key, token) -> store.checkpoint(tx, key, token, new RecoveryPoint(CODEC, bytes(value))),
                        (name, answer) -> model.checkpointed(name, value), value);
            } else if (step instanceof CompleteLease c) {
                String value = "r" + n;
                fenced(c.key(), c.worker(), "completeLeased", Promise.FENCING, true,
                        (tx, key, token) -> store.completeLeased(tx, token, new LeasedCompletion(key,
                                c.failed() ? RecordStatus.FAILED : RecordStatus.COMPLETED, CODEC, bytes(value),
                                StoreFixture.RETENTION)).isPresent(),
                        (name, answer) -> model.leaseCompleted(name, c.failed(), value), value);
            } else if (step instanceof ReleaseLease r) {
                fenced(r.key(), r.worker(), "releaseLease", Promise.LEASE_RELEASE, true, store::releaseLease,
                        (name, answer) -> model.released(name), null);
            } else if (step instanceof ExtendLease e) {
                Duration lease = e.live() ? StoreFixture.LIVE_LEASE : StoreFixture.SHORT_LEASE;
                Instant[] until = new Instant[1];
                fenced(e.key(), e.worker(), "extendLease", Promise.LEASE_EXTEND, true, (tx, key, token) -> {
                    Optional<Instant> end = store.extendLease(tx, key, token, lease);
                    until[0] = end.orElse(null);
                    return end.isPresent();
                }, (name, answer) -> model.extended(name, until[0], e.live()), null);
            } else if (step instanceof RunOut) {
                contract.letLeaseRunOut(StoreFixture.SHORT_LEASE);
                model.shortLeasesRanOut();
            } else {
                Instant now = storeNow != null ? storeNow : contract.clock().instant();
                int removed = contract.committed(tx -> store.purgeExpired(tx, now, StoreFixture.PURGE_BATCH));
                StoreFixture.check(removed == 0, Promise.PURGE, "A purge at the store's now, " + now + ", removed " + removed
                        + " records, but none had expired: every record of the sequence, in progress (its lease live, ended or released)"
                        + " or completed, is retained for " + Operations.duration(StoreFixture.RETENTION) + " from its claim or completion");
            }
        }

        void claim(ClaimLease c, String token) throws Exception {
            String name = Operations.LEASE_KEYS.get(c.key());
            Duration lease = c.live() ? StoreFixture.LIVE_LEASE : StoreFixture.SHORT_LEASE;
            LeaseRequest request = new LeaseRequest(IdempotencyKey.of(scope, name), Operations.fingerprint(c.fingerprint()), token, lease,
                    StoreFixture.RETENTION, StoreFixture.LOCK_TIMEOUT);
            ClaimExpectation expected = model.expectClaim(name, c.fingerprint());
            LeaseClaim got = inTx(c.commit(), tx -> store.claimLease(tx, request));
            if (got instanceof LeaseClaim.Acquired a) {
                storeNow = a.now();
            } else if (got instanceof LeaseClaim.Held h) {
                storeNow = h.now();
            }
            Lease l = model.lease(name);
            String seen = "claimLease answered " + describe(got) + "; the model holds " + describe(l);
            switch (expected) {
                case NEW:
                    acquired(got, 1, null, Promise.LEASE_NEW, lease, seen);
                    break;
                case FOUND:
                    found(got, l, seen);
                    return;
                case HELD_MISMATCH:
                    held(got, l, Promise.LEASE_MISMATCH, seen);
                    return;
                case HELD_LIVE:
                    held(got, l, l.setBy() == Model.EndSetBy.EXTEND ? Promise.LEASE_EXTEND : Promise.LEASE_LIVE, seen);
                    return;
                case HELD_OR_TAKE_OVER:
                    if (got instanceof LeaseClaim.Held) {
                        held(got, l, Promise.LEASE_LIVE, seen);
                        return;
                    }
                    acquired(got, l.attempts() + 1, l.point(), Promise.LEASE_TAKE_OVER, lease, seen);
                    break;
                default:
                    Promise p = l.setBy() == Model.EndSetBy.RELEASE ? Promise.LEASE_RELEASE : Promise.LEASE_TAKE_OVER;
                    acquired(got, l.attempts() + 1, l.point(), p, lease, seen);
            }
            if (c.commit()) {
                LeaseClaim.Acquired a = (LeaseClaim.Acquired) got;
                model.leaseClaimed(name, c.fingerprint(), token, a.attempt(), a.leaseUntil(), c.live());
            }
        }

        /** @param p the promise broken if it is not acquired (attempt 1: also a wrong count; a take-over's count is 4.2's) */
        private void acquired(LeaseClaim got, int attempt, String point, Promise p, Duration lease, String seen) {
            check(got instanceof LeaseClaim.Acquired, p, "Expected Acquired as attempt " + attempt + ", resuming from " + point + "; " + seen);
            LeaseClaim.Acquired a = (LeaseClaim.Acquired) got;
            check(a.attempt() == attempt, attempt == 1 ? p : Promise.LEASE_TAKE_OVER, "Expected attempt " + attempt + "; " + seen);
            String resumed = value(a.resumeFrom());
            if (!java.util.Objects.equals(resumed, point)) {
                Promise why = model.refusedOrigin(resumed);
                throw new StepFailure((why != null ? why : point == null ? p : Promise.RECOVERY_POINT).broken("Expected the recovery point "
                        + point + "; " + seen), null);
            }
            check(a.leaseUntil().equals(a.now().plus(lease)), p, "Expected a lease until the claim's now plus " + lease + "; " + seen);
        }

        private void held(LeaseClaim got, Lease l, Promise p, String seen) {
            check(got instanceof LeaseClaim.Held, p, "Expected Held; " + seen);
            LeaseClaim.Held h = (LeaseClaim.Held) got;
            check(h.fingerprint().equals(Operations.fingerprint(l.fingerprint())), Promise.LEASE_MISMATCH,
                    "Expected Held with the record's fingerprint; " + seen);
            check(h.attempts() == l.attempts(), Promise.LEASE_TAKE_OVER, "Expected Held after " + l.attempts() + " attempts; " + seen);
            check(l.leaseUntil() == null || l.leaseUntil().equals(h.leaseUntil()), p, "Expected Held until " + l.leaseUntil() + "; " + seen);
        }

        private void found(LeaseClaim got, Lease l, String seen) {
            StoredRecord r = got instanceof LeaseClaim.Existing f ? f.record() : null;
            String result = r == null ? null : value(r.codec(), r.result());
            Promise stale = model.refusedOrigin(result);
            check(stale == null, stale, "The result comes from a write that was refused or rolled back; " + seen);
            RecordStatus status = l.failed() ? RecordStatus.FAILED : RecordStatus.COMPLETED;
            check(r != null && r.status() == status && l.result().equals(result) && r.fingerprint().equals(Operations.fingerprint(l.fingerprint())),
                    Promise.LEASE_FOUND, "Expected Existing, " + status + " with '" + l.result() + "'; " + seen);
        }

        private void fenced(int keyIndex, int worker, String what, Promise holderPromise, boolean commit, FencedWrite<C> write,
                            Applied applied, String value) throws Exception {
            String name = Operations.LEASE_KEYS.get(keyIndex);
            Lease current = model.lease(name);
            String token = worker == Operations.HOLDER ? (current == null ? "nobody" : current.owner())
                    : tokens.getOrDefault(worker + "/" + keyIndex, Operations.WORKERS.get(worker) + "-none");
            boolean holds = model.holds(name, token);
            boolean answer = inTx(commit, tx -> write.apply(tx, IdempotencyKey.of(scope, name), token));
            String seen = what + " with token " + token + " answered " + answer + "; the model holds " + describe(model.lease(name));
            check(answer || !holds, holderPromise, "The holder's " + what + " was refused; " + seen);
            check(!answer || holds, Promise.FENCING, "A token that does not hold the key had its " + what + " accepted; " + seen);
            if (holds && commit) {
                applied.apply(name, answer);
            } else if (value != null) {
                model.refusedWrite(value, holds ? Promise.RECOVERY_POINT : Promise.FENCING);
            }
        }
    }

    @FunctionalInterface
    private interface FencedWrite<C> {
        boolean apply(C tx, IdempotencyKey key, String token);
    }

    @FunctionalInterface
    private interface Applied {
        void apply(String key, boolean answer);
    }

    private <T> T inTx(boolean commit, TxWork<C, T, RuntimeException> primitive) throws Exception {
        C tx = contract.open();
        T result;
        try {
            result = primitive.apply(tx);
        } catch (Throwable t) {
            contract.rollbackQuietly(tx, t);
            throw t;
        }
        if (commit) {
            contract.commit(tx);
        } else {
            contract.rollback(tx);
        }
        return result;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String value(RecoveryPoint p) {
        return p == null ? null : value(p.codec(), p.state());
    }

    private static String value(String codec, byte[] bytes) {
        return (CODEC.equals(codec) ? "" : codec + ":") + (bytes == null ? "null" : new String(bytes, StandardCharsets.UTF_8));
    }

    private static String describe(LeaseClaim c) {
        if (c instanceof LeaseClaim.Acquired a) {
            return "Acquired(attempt " + a.attempt() + ", resuming from " + value(a.resumeFrom()) + ")";
        }
        if (c instanceof LeaseClaim.Existing f) {
            return "Existing(" + f.record().status() + " '" + value(f.record().codec(), f.record().result()) + "')";
        }
        if (c instanceof LeaseClaim.Held h) {
            return "Held(fingerprint " + (h.fingerprint().equals(Fingerprint.of("B")) ? "B" : "A") + ", " + h.attempts() + " attempts, until "
                    + h.leaseUntil() + ")";
        }
        return String.valueOf(c);
    }

    private static String describe(Lease l) {
        if (l == null) {
            return "no record";
        }
        return (l.done() ? (l.failed() ? "FAILED '" : "COMPLETED '") + l.result() + "'" : "in progress") + " owned by " + l.owner()
                + ", fingerprint " + Operations.FINGERPRINTS.get(l.fingerprint()) + ", " + l.attempts() + " attempts, recovery point "
                + l.point() + ", lease " + l.end() + (l.leaseUntil() == null ? "" : " until " + l.leaseUntil());
    }
}
