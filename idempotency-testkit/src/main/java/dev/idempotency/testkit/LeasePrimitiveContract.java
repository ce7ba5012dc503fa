package dev.idempotency.testkit;

import static dev.idempotency.testkit.StoreFixture.A;
import static dev.idempotency.testkit.StoreFixture.B;
import static dev.idempotency.testkit.StoreFixture.LIVE_LEASE;
import static dev.idempotency.testkit.StoreFixture.RETENTION;
import static dev.idempotency.testkit.StoreFixture.SHORT_LEASE;
import static dev.idempotency.testkit.StoreFixture.acquired;
import static dev.idempotency.testkit.StoreFixture.assertOutcome;
import static dev.idempotency.testkit.StoreFixture.await;
import static dev.idempotency.testkit.StoreFixture.bytes;
import static dev.idempotency.testkit.StoreFixture.found;
import static dev.idempotency.testkit.StoreFixture.held;
import static dev.idempotency.testkit.StoreFixture.point;
import static dev.idempotency.testkit.StoreFixture.request;
import static dev.idempotency.testkit.StoreFixture.require;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.LeasePolicy;
import dev.idempotency.Outcome;
import dev.idempotency.ResultCodec;
import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.LeasedCompletion;
import dev.idempotency.spi.LeasingStore;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.RecoveryPoint;
import dev.idempotency.spi.StoredRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * Lease mode's primitives (section 4 of docs/contract.md; the promises of
 * {@link dev.idempotency.spi.LeasingStore}), called directly, each in a short transaction of its
 * own (for a store without transactions, a {@link dev.idempotency.spi.LeaseOnlyStore}, each on its
 * own: whatever a rolled-back transaction would check is left out, and the atomic claim is checked
 * by claims that race for one key instead of one that waits for an open transaction): one example per promise, {@code Contract 4.1 (new lease)}, {@code Contract 4.1 (atomic
 * claim)}, {@code Contract 4.2 (live lease)}, {@code Contract 4.5 (take-over)}, {@code Contract 4.2
 * (mismatch)}, {@code Contract 4.4 (fencing)}, {@code Contract 4.5 (release)}, {@code Contract 4.7
 * (recovery point)}, {@code Contract 4.1 (found)}, {@code Contract 4.1 (expired record)} and
 * {@code Contract 4.3 (extend)}, {@code Contract 4.5 (withdrawal)} and {@code Contract 4.6 (one clock)}, and a lease property: random sequences of lease primitives by
 * several owners, compared with a model. A fenced primitive ({@code extendLease},
 * {@code checkpoint}, {@code completeLeased}, {@code releaseLease}) is expected to succeed exactly
 * while the record is in progress and the token is its owner's: a release ends the lease but keeps
 * the owner, and a completed record is held by no one.
 *
 * <p>Implement it only for a {@code LeasingStore}: for another store its tests fail (under
 * {@link IdempotencyStoreContract} they are skipped). Leases follow the store's clock: see
 * {@link StoreFixture#letLeaseRunOut(java.time.Duration)}.
 *
 * @param <C> the store's transaction type
 */
public interface LeasePrimitiveContract<C> extends ContractPart<C> {

    /**
     * Contract 4.1 (docs/contract.md): a new key is claimed as attempt 1; the claim holds once
     * committed, and a rolled-back one leaves nothing.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void newKeyIsClaimedAsAttemptOneAndHoldsOnlyOnceCommitted() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.LEASE_NEW;
        IdempotencyKey key = IdempotencyKey.of("lease-new", "k1");
        if (f.hasTransactions()) {
            acquired(p, f.claimLease(key, A, "rolled-back", LIVE_LEASE, false), 1, null);
        }
        LeaseClaim.Acquired first = acquired(p, f.claimLease(key, A, "owner-1", LIVE_LEASE, true), 1, null);
        assertThat(first.leaseUntil()).as(p.broken("The lease of a claim at " + first.now() + " for " + Operations.duration(LIVE_LEASE) + " must end at its now"
                + " plus the lease")).isEqualTo(first.now().plus(LIVE_LEASE));
        held(p, f.claimLease(key, A, "owner-2", LIVE_LEASE, true), A, first.leaseUntil(), 1);
        assertThat(f.changed(tx -> f.leasing().releaseLease(tx, key, "rolled-back"))).as(p.broken("An owner token that holds nothing"
                + " released the lease of the committed claim")).isFalse();
    }

    /**
     * Contract 4.1 (docs/contract.md): a lease claim waits for an open transaction that claimed the
     * key, then sees its claim, or claims itself.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void leaseClaimWaitsForAnOpenClaimOfTheKey() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.LEASE_ATOMIC;
        if (!f.hasTransactions()) {
            f.racingLeaseClaimsAcquireOnce(p);
            return;
        }
        for (boolean holderCommits : List.of(true, false)) {
            IdempotencyKey key = IdempotencyKey.of("lease-atomic", holderCommits ? "commits" : "rolls-back");
            C holder = f.open();
            LeaseClaim.Acquired held;
            Future<LeaseClaim> waiter;
            try {
                held = acquired(p, f.leasing().claimLease(holder, request(key, A, "holder", LIVE_LEASE)), 1, null);
                waiter = f.threads.submit(() -> f.claimLease(key, A, "waiter", LIVE_LEASE, true));
                Thread.sleep(100); // lets the waiter reach the store; the answer is the same if it does not
            } catch (Throwable t) {
                f.rollbackQuietly(holder, t);
                throw t;
            }
            if (holderCommits) {
                f.commit(holder);
                held(p, await(p, waiter), A, held.leaseUntil(), 1);
            } else {
                f.rollback(holder);
                acquired(p, await(p, waiter), 1, null);
            }
        }
    }

    /**
     * Contract 4.2 (docs/contract.md): a live lease is never taken over; the claimant gets Held
     * with the lease's end.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void liveLeaseIsNeverTakenOver() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.LEASE_LIVE;
        IdempotencyKey key = IdempotencyKey.of("lease-live", "k1");
        LeaseClaim.Acquired first = acquired(p, f.claimLease(key, A, "owner-1", LIVE_LEASE, true), 1, null);
        held(p, f.claimLease(key, A, "owner-2", LIVE_LEASE, true), A, first.leaseUntil(), 1);
        held(p, f.claimLease(key, A, "owner-3", SHORT_LEASE, true), A, first.leaseUntil(), 1);
        assertThat(f.complete(key, "owner-1", "first")).as(p.broken("The holder could not complete after others asked for its key"))
                .isPresent();
        found(p, f.claimLease(key, A, "owner-4", LIVE_LEASE, true), A, RecordStatus.COMPLETED, "first");
    }

    /**
     * Contract 4.5 (docs/contract.md): a lease that ended is taken over by the next claim, counting
     * attempts 2, 3, ...
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void endedLeaseIsTakenOverCountingAttempts() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.LEASE_TAKE_OVER;
        IdempotencyKey key = IdempotencyKey.of("lease-take-over", "k1");
        acquired(p, f.claimLease(key, A, "owner-1", SHORT_LEASE, true), 1, null);
        f.letLeaseRunOut(SHORT_LEASE);
        acquired(p, f.claimLease(key, A, "owner-2", SHORT_LEASE, true), 2, null);
        f.letLeaseRunOut(SHORT_LEASE);
        LeaseClaim.Acquired third = acquired(p, f.claimLease(key, A, "owner-3", LIVE_LEASE, true), 3, null);
        assertThat(third.leaseUntil()).as(p.broken("The lease of a take-over at " + third.now() + " for " + Operations.duration(LIVE_LEASE) + " must end at"
                + " its now plus the lease")).isEqualTo(third.now().plus(LIVE_LEASE));
        held(p, f.claimLease(key, A, "owner-4", LIVE_LEASE, true), A, third.leaseUntil(), 3);
    }

    /**
     * Contract 4.2 (docs/contract.md): a record in progress with another fingerprint is never taken
     * over, even after its lease ended.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void inProgressRecordWithAnotherFingerprintIsNeverTakenOver() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.LEASE_MISMATCH;
        IdempotencyKey key = IdempotencyKey.of("lease-mismatch", "k1");
        LeaseClaim.Acquired first = acquired(p, f.claimLease(key, A, "owner-1", SHORT_LEASE, true), 1, null);
        f.letLeaseRunOut(SHORT_LEASE);
        held(p, f.claimLease(key, B, "owner-2", LIVE_LEASE, true), A, first.leaseUntil(), 1);
        acquired(p, f.claimLease(key, A, "owner-3", LIVE_LEASE, true), 2, null);
        Outcome<String> other = f.managed(LeasePolicy.DEFAULT_LEASE).lease(IdempotentCall.of(key, ResultCodec.string()).withFingerprint(B), attempt -> "other");
        assertOutcome(p, other, Outcome.Status.MISMATCH, null);
    }

    /**
     * Contract 4.4 (docs/contract.md): after a take-over, the old owner's extend, checkpoint,
     * complete and release change nothing and say so; the new owner's recovery point and result
     * stand.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void fencedWritesWithAStaleOwnerTokenChangeNothing() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.FENCING;
        IdempotencyKey key = IdempotencyKey.of("lease-fencing", "k1");
        RecoveryPoint kept = point("prepared by owner-1");
        acquired(p, f.claimLease(key, A, "owner-1", SHORT_LEASE, true, kept), 1, null);
        f.letLeaseRunOut(SHORT_LEASE);
        LeaseClaim.Acquired second = acquired(p, f.claimLease(key, A, "owner-2", LIVE_LEASE, true), 2, kept);
        LeasingStore<C> s = f.leasing();
        assertThat(f.ended(tx -> s.extendLease(tx, key, "owner-1", LIVE_LEASE.multipliedBy(2))))
                .as(p.broken("extendLease with the taken-over owner token reported a new lease end")).isEmpty();
        assertThat(f.changed(tx -> s.checkpoint(tx, key, "owner-1", point("stale")))).as(p.broken("checkpoint with the taken-over owner token"
                + " reported a recovery point recorded")).isFalse();
        assertThat(f.changed(tx -> s.releaseLease(tx, key, "owner-1"))).as(p.broken("releaseLease with the taken-over owner token reported"
                + " the lease ended")).isFalse();
        assertThat(f.complete(key, "owner-1", "stale")).as(p.broken("completeLeased with the taken-over owner token reported the result"
                + " recorded")).isEmpty();
        held(p, f.claimLease(key, A, "owner-3", LIVE_LEASE, true), A, second.leaseUntil(), 2);
        assertThat(f.changed(tx -> s.releaseLease(tx, key, "owner-2"))).as(p.broken("The holder could not release its lease")).isTrue();
        acquired(p, f.claimLease(key, A, "owner-4", LIVE_LEASE, true), 3, kept);
        assertThat(f.complete(key, "owner-4", "new owner")).as(p.broken("The holder could not complete")).isPresent();
        assertThat(f.complete(key, "owner-1", "stale")).as(p.broken("completeLeased with a taken-over owner token reported the result"
                + " recorded over the holder's")).isEmpty();
        found(p, f.claimLease(key, A, "owner-5", LIVE_LEASE, true), A, RecordStatus.COMPLETED, "new owner");
    }

    /**
     * Contract 4.5 (docs/contract.md): release ends the lease at once; the next claim takes over,
     * with attempts counted and the recovery point kept.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void releaseEndsTheLeaseAtOnceKeepingAttemptsAndRecoveryPoint() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.LEASE_RELEASE;
        IdempotencyKey key = IdempotencyKey.of("lease-release", "k1");
        RecoveryPoint prepared = point("prepared");
        acquired(p, f.claimLease(key, A, "owner-1", LIVE_LEASE, true, prepared), 1, null);
        assertThat(f.changed(tx -> f.leasing().releaseLease(tx, key, "owner-1"))).as(p.broken("The holder's release reported nothing done"))
                .isTrue();
        acquired(p, f.claimLease(key, A, "owner-2", LIVE_LEASE, true), 2, prepared);
    }

    /**
     * Contract 4.5 (docs/contract.md): the holder's withdrawal of a claim that recorded nothing else
     * leaves nothing of the key, so that a claim of another fingerprint is attempt 1; or, where the
     * store keeps {@link dev.idempotency.spi.LeaseOnlyStore#withdrawClaim}'s default and answers
     * {@code false}, it ends the lease, and the next claim takes the record over at once as attempt 2.
     * A withdrawal by a token that no longer holds the record (taken over, or completed) changes
     * nothing and answers {@code false}. On a store with transactions the claim's rollback is its
     * withdrawal (the engine relies on it for a prepare value it cannot record): a claim rolled back
     * with its recovery point leaves nothing of the key either.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void withdrawnClaimLeavesNothingOfTheKeyAndAStaleWithdrawalChangesNothing() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.LEASE_WITHDRAW;
        IdempotencyKey key = IdempotencyKey.of("lease-withdraw", "k1");
        if (f.hasTransactions()) {
            acquired(p, f.claimLease(key, A, "rolled-back", LIVE_LEASE, false, point("prepared")), 1, null);
            acquired(p, f.claimLease(key, B, "owner-2", LIVE_LEASE, true), 1, null);
            return;
        }
        acquired(p, f.claimLease(key, A, "owner-1", LIVE_LEASE, true), 1, null);
        if (f.withdrawClaim(key, "owner-1")) {
            acquired(p, f.claimLease(key, B, "owner-2", LIVE_LEASE, true), 1, null);
        } else {
            acquired(p, f.claimLease(key, A, "owner-2", LIVE_LEASE, true), 2, null); // the default: the lease ended, the record kept
        }
        IdempotencyKey stale = IdempotencyKey.of("lease-withdraw", "stale");
        acquired(p, f.claimLease(stale, A, "owner-1", SHORT_LEASE, true), 1, null);
        f.letLeaseRunOut(SHORT_LEASE);
        LeaseClaim.Acquired second = acquired(p, f.claimLease(stale, A, "owner-2", LIVE_LEASE, true), 2, null);
        assertThat(f.withdrawClaim(stale, "owner-1")).as(p.broken("withdrawClaim with the taken-over owner token reported the record"
                + " deleted")).isFalse();
        held(p, f.claimLease(stale, A, "owner-3", LIVE_LEASE, true), A, second.leaseUntil(), 2);
        assertThat(f.complete(stale, "owner-2", "new owner")).as(p.broken("The holder could not complete after a stale withdrawal"))
                .isPresent();
        assertThat(f.withdrawClaim(stale, "owner-2")).as(p.broken("withdrawClaim of a completed record reported it deleted")).isFalse();
        found(p, f.claimLease(stale, B, "owner-4", LIVE_LEASE, true), A, RecordStatus.COMPLETED, "new owner");
    }

    /**
     * Contract 4.7 (docs/contract.md): the recovery point is handed to every later owner unchanged;
     * only a committed checkpoint replaces it; neither a take-over nor a release clears it or sets
     * it back.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void recoveryPointIsHandedOnUnchangedAndNeverGoesBack() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.RECOVERY_POINT;
        IdempotencyKey key = IdempotencyKey.of("lease-recovery", "k1");
        RecoveryPoint one = point("one");
        RecoveryPoint two = new RecoveryPoint("contract-codec", null);
        acquired(p, f.claimLease(key, A, "owner-1", SHORT_LEASE, true, one), 1, null);
        assertThat(f.changed(tx -> f.leasing().checkpoint(tx, key, "owner-1", two))).as(p.broken("The holder's checkpoint was refused")).isTrue();
        f.letLeaseRunOut(SHORT_LEASE);
        acquired(p, f.claimLease(key, A, "owner-2", SHORT_LEASE, true), 2, two);
        f.letLeaseRunOut(SHORT_LEASE);
        acquired(p, f.claimLease(key, A, "owner-3", LIVE_LEASE, true), 3, two);
        if (f.hasTransactions()) {
            C tx = f.open();
            try {
                assertThat(f.leasing().checkpoint(tx, key, "owner-3", point("rolled back"))).as(p.broken("The holder's checkpoint was refused")).isTrue();
            } finally {
                f.rollback(tx);
            }
        }
        assertThat(f.changed(t -> f.leasing().releaseLease(t, key, "owner-3"))).as(p.broken("The holder's release was refused")).isTrue();
        acquired(p, f.claimLease(key, A, "owner-4", LIVE_LEASE, true), 4, two);
        RecoveryPoint three = point("three");
        assertThat(f.changed(t -> f.leasing().checkpoint(t, key, "owner-4", three))).as(p.broken("The holder's checkpoint was refused")).isTrue();
        assertThat(f.changed(t -> f.leasing().releaseLease(t, key, "owner-4"))).as(p.broken("The holder's release was refused")).isTrue();
        acquired(p, f.claimLease(key, A, "owner-5", LIVE_LEASE, true), 5, three);
    }

    /**
     * Contract 4.1 (docs/contract.md): a completed or failed record is Existing, with what
     * completeLeased recorded, whatever the fingerprint.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void completedOrFailedRecordIsFound() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.LEASE_FOUND;
        for (RecordStatus status : List.of(RecordStatus.COMPLETED, RecordStatus.FAILED)) {
            IdempotencyKey key = IdempotencyKey.of("lease-found", status.name());
            acquired(p, f.claimLease(key, A, "owner-1", LIVE_LEASE, true), 1, null);
            Instant completedAt = f.ended(tx -> f.leasing().completeLeased(tx, "owner-1", new LeasedCompletion(key, status, "contract-codec",
                    bytes("result"), RETENTION))).orElseThrow(() -> new AssertionError(p.broken("The holder could not complete")));
            StoredRecord r = found(p, f.claimLease(key, A, "owner-2", LIVE_LEASE, true), A, status, "result");
            assertThat(r.completedAt()).as(p.broken("The Existing record's completion time")).isEqualTo(completedAt);
            assertThat(r.expiresAt()).as(p.broken("The Existing record's expiry (completion plus retention)")).isEqualTo(completedAt.plus(RETENTION));
            found(p, f.claimLease(key, B, "owner-3", LIVE_LEASE, true), A, status, "result");
        }
    }

    /**
     * Contract 4.1 (docs/contract.md): a record whose retention has run out is claimed anew as
     * attempt 1, with no recovery point.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void expiredRecordIsClaimedAnewAsAttemptOne() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.LEASE_EXPIRED;
        IdempotencyKey key = IdempotencyKey.of("lease-expired", "k1");
        acquired(p, f.claimLease(key, A, "owner-1", SHORT_LEASE, true, point("old life")), 1, null);
        f.letLeaseRunOut(SHORT_LEASE);
        acquired(p, f.claimLease(key, A, "owner-2", LIVE_LEASE, true), 2, point("old life"));
        assertThat(f.ended(tx -> f.leasing().completeLeased(tx, "owner-2", new LeasedCompletion(key, RecordStatus.COMPLETED, "contract-codec",
                bytes("old"), SHORT_LEASE)))).as(p.broken("The holder could not complete")).isPresent();
        f.letLeaseRunOut(SHORT_LEASE);
        acquired(p, f.claimLease(key, B, "owner-3", LIVE_LEASE, true), 1, null);
    }

    /**
     * Contract 4.3 and 4.4 (docs/contract.md): extendLease moves the end of the holder's lease
     * forward, and a claim then sees the new end. Fenced by the token alone: the holder's extend after
     * its lease ran out, while nobody took the record over, succeeds too, and a claim then answers
     * Held.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void extendMovesTheLeaseEndForward() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.LEASE_EXTEND;
        IdempotencyKey key = IdempotencyKey.of("lease-extend", "k1");
        LeaseClaim.Acquired first = acquired(p, f.claimLease(key, A, "owner-1", SHORT_LEASE, true), 1, null);
        Instant extended = f.ended(tx -> f.leasing().extendLease(tx, key, "owner-1", LIVE_LEASE))
                .orElseThrow(() -> new AssertionError(p.broken("The holder's extension was refused")));
        assertThat(extended).as(p.broken("The extended lease must end after the claimed one, " + first.leaseUntil())).isAfter(first.leaseUntil());
        f.letLeaseRunOut(SHORT_LEASE);
        held(p, f.claimLease(key, A, "owner-2", LIVE_LEASE, true), A, extended, 1);

        IdempotencyKey ended = IdempotencyKey.of("lease-extend", "after-its-end");
        acquired(p, f.claimLease(ended, A, "owner-1", SHORT_LEASE, true), 1, null);
        f.letLeaseRunOut(SHORT_LEASE);
        Instant renewed = f.ended(tx -> f.leasing().extendLease(tx, ended, "owner-1", LIVE_LEASE))
                .orElseThrow(() -> new AssertionError(p.broken("The holder's extension after its lease ran out, nobody having taken "
                        + ended + " over, was refused: the token still holds the record")));
        held(p, f.claimLease(ended, A, "owner-2", LIVE_LEASE, true), A, renewed, 1);
    }

    /**
     * Contract 4.6 (docs/contract.md): lease ends follow the store's clock, whatever the clock of the
     * node that asks ({@link StoreFixture#storeOnAnotherNode}): a node two hours ahead is told that a
     * live lease of one hour is held, and a node two hours behind takes over a lease that ended.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void leasesFollowTheStoresClockNotTheNodes() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.LEASE_CLOCK;
        LeasingStore<C> ahead = f.leasingOnAnotherNode(java.time.Duration.ofHours(2));
        LeasingStore<C> behind = f.leasingOnAnotherNode(java.time.Duration.ofHours(-2));
        IdempotencyKey live = IdempotencyKey.of("lease-clock", "live");
        LeaseClaim.Acquired first = acquired(p, f.claimLease(live, A, "owner-1", LIVE_LEASE, true), 1, null);
        held(p, f.leaseTx(tx -> ahead.claimLease(tx, request(live, A, "node-ahead", LIVE_LEASE))), A, first.leaseUntil(), 1);
        IdempotencyKey ended = IdempotencyKey.of("lease-clock", "ended");
        acquired(p, f.claimLease(ended, A, "owner-1", SHORT_LEASE, true), 1, null);
        f.letLeaseRunOut(SHORT_LEASE);
        acquired(p, f.leaseTx(tx -> behind.claimLease(tx, request(ended, A, "node-behind", LIVE_LEASE))), 2, null);
    }

    /**
     * Contract 4.6 (docs/contract.md): a record is judged by the clock that timed it. The records
     * that lease primitives wrote are timed by the store's clock, and a transactional claim or a
     * purge that meets them judges them by it, whatever the engine's clock: an engine two hours
     * ahead (past the retention) neither claims over nor purges a live lease nor a completed lease
     * record, and an engine two hours behind counts as absent, and purges, a lease record whose
     * retention ended by the store's clock. For a store that is both transactional and leasing.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void leaseRecordsMetByTransactionalClaimsAndPurgesFollowTheStoresClock() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.LEASE_RECORD_CLOCK;
        Idempotency<C> ahead = f.engineOnAnotherNode(Duration.ofHours(2));
        Idempotency<C> behind = f.engineOnAnotherNode(Duration.ofHours(-2));
        java.util.concurrent.atomic.AtomicInteger runs = new java.util.concurrent.atomic.AtomicInteger();

        IdempotencyKey live = IdempotencyKey.of("record-clock", "live");
        acquired(p, f.claimLease(live, A, "owner-1", LIVE_LEASE, true), 1, null);
        IdempotencyKey done = IdempotencyKey.of("record-clock", "done");
        acquired(p, f.claimLease(done, A, "owner-1", LIVE_LEASE, true), 1, null);
        require(f.ended(tx -> f.leasing().completeLeased(tx, "owner-1", new LeasedCompletion(done, RecordStatus.COMPLETED,
                ResultCodec.string().name(), bytes("leased"), RETENTION))).isPresent(), p,
                () -> "the holder's completion of " + done + " was refused");
        Outcome<String> onLive = f.committed(tx -> ahead.execute(IdempotentCall.of(live, A, ResultCodec.string()), tx,
                () -> "ran " + runs.incrementAndGet()));
        require(onLive.status() == Outcome.Status.IN_PROGRESS, p, () -> "an engine two hours ahead claimed " + live + ", held under a"
                + " live lease of one hour by the store's clock, and got " + onLive + ": the record was judged by the engine's clock");
        Outcome<String> onDone = f.committed(tx -> ahead.execute(IdempotentCall.of(done, A, ResultCodec.string()), tx,
                () -> "ran " + runs.incrementAndGet()));
        require(onDone.status() == Outcome.Status.REPLAYED, p, () -> "an engine two hours ahead claimed " + done + ", completed in lease"
                + " mode and retained for one hour by the store's clock, and got " + onDone + " instead of its replay");
        int purgedAhead = f.committed(tx -> ahead.purgeExpired(tx, StoreFixture.PURGE_BATCH));
        require(purgedAhead == 0, p, () -> "an engine two hours ahead purged " + purgedAhead + " lease records whose retention by the"
                + " store's clock has not ended");
        require(f.claimLease(live, A, "owner-2", LIVE_LEASE, true) instanceof LeaseClaim.Held, p,
                () -> "the live lease of " + live + " is no longer held after the purge of an engine two hours ahead");
        require(f.claimLease(done, A, "owner-2", LIVE_LEASE, true) instanceof LeaseClaim.Existing, p,
                () -> "the completed lease record of " + done + " is gone after the purge of an engine two hours ahead");

        IdempotencyKey ended = IdempotencyKey.of("record-clock", "ended");
        LeaseRequest brief = new LeaseRequest(ended, A, "owner-1", SHORT_LEASE, SHORT_LEASE, StoreFixture.LOCK_TIMEOUT);
        require(f.leaseTx(tx -> f.leasing().claimLease(tx, brief)) instanceof LeaseClaim.Acquired, p,
                () -> "the first claim of " + ended + " was not acquired");
        require(f.ended(tx -> f.leasing().completeLeased(tx, "owner-1", new dev.idempotency.spi.LeasedCompletion(ended,
                dev.idempotency.spi.RecordStatus.COMPLETED, "contract-codec", null, SHORT_LEASE))).isPresent(), p,
                () -> "the holder's completion of " + ended + " was refused");
        IdempotencyKey purged = IdempotencyKey.of("record-clock", "purged");
        LeaseRequest briefToo = new LeaseRequest(purged, A, "owner-1", SHORT_LEASE, SHORT_LEASE, StoreFixture.LOCK_TIMEOUT);
        require(f.leaseTx(tx -> f.leasing().claimLease(tx, briefToo)) instanceof LeaseClaim.Acquired, p,
                () -> "the first claim of " + purged + " was not acquired");
        f.letLeaseRunOut(SHORT_LEASE);
        int before = runs.get();
        Outcome<String> onEnded = f.committed(tx -> behind.execute(IdempotentCall.of(ended, A, ResultCodec.string()), tx,
                () -> "ran " + runs.incrementAndGet()));
        require(onEnded.status() == Outcome.Status.EXECUTED && runs.get() == before + 1, p, () -> "an engine two hours behind claimed "
                + ended + ", a lease record whose retention ended by the store's clock, and got " + onEnded + " instead of running"
                + " the work: the record was judged by the engine's clock");
        int purgedBehind = f.committed(tx -> behind.purgeExpired(tx, StoreFixture.PURGE_BATCH));
        require(purgedBehind >= 1, p, () -> "an engine two hours behind purged nothing, though the lease record of " + purged
                + " has expired by the store's clock");
        require(f.claimLease(purged, A, "owner-2", LIVE_LEASE, true) instanceof LeaseClaim.Acquired claim && claim.attempt() == 1, p,
                () -> "the expired lease record of " + purged + " was not purged by an engine two hours behind");
    }

    /**
     * Contract 4 (docs/contract.md): random sequences of lease primitives by three workers on two
     * keys (claims with a live or a short lease, committed or rolled back; checkpoints;
     * completions; releases; extensions; letting the short leases run out), every answer compared
     * with a model. A short lease that has not been let run out may or may not have ended by the
     * store's clock, and the model accepts either answer. Reports the shortest failing sequence
     * found, one step per line.
     */
    @Test
    default void randomLeaseSequencesKeepTheContract() {
        StoreFixture<C> f = fixture();
        LeaseSequences<C> leases = new LeaseSequences<>(f, f.leasing());
        f.sequenceProperty("lease sequences run", f.effort().leaseSequences(), LeaseSequences.sequences(f.hasTransactions()),
                sequence -> f.runShrinking(sequence.steps(), leases::firstBroken, step -> List.of()));
    }
}
