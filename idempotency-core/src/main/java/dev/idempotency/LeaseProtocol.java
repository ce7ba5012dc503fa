package dev.idempotency;

import dev.idempotency.internal.FailureRecords;
import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeaseOnlyStore;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.LeasingStore;
import dev.idempotency.spi.NoTransaction;
import dev.idempotency.spi.RecoveringStore;
import dev.idempotency.spi.RecoveryPoint;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lease mode, with a call only or with phases (its steps are listed at {@link ManagedIdempotency}):
 * claim under a lease and run the prepare phase in a short transaction, run the call outside any
 * transaction, then record the result (with the finish phase) or a final failure fenced by the
 * attempt's owner token, or end the lease so that a retry runs at once. The key is already validated,
 * and the listener is told by the caller of this class. Thread-safe.
 *
 * @param <C> the transaction type
 */
final class LeaseProtocol<C> {

    private static final Logger log = LoggerFactory.getLogger(LeaseProtocol.class);
    private static final SecureRandom TOKENS = new SecureRandom();
    /**
     * What a result that cannot be recorded (over the size limit, or one its codec cannot encode)
     * leaves: the call has run, so the operation is recorded as failed instead, and no retry runs the
     * call again for a result that could never be recorded either. The first words depend on the
     * store: a transaction rolls the finish phase's writes back; without one they stand.
     */
    private static final String UNRECORDED_TAIL = " the operation is recorded as failed with this exception, which every retry with"
            + " the key gets back (Outcome.Failed); the call is not run again. What the call did outside the database stands: settle it"
            + " there by hand if need be, and make the result recordable for new operations (smaller, or one its codec encodes)";
    private static final String UNRECORDABLE_RESULT = "the call has run: the finish phase's writes were rolled back, and"
            + UNRECORDED_TAIL;
    private static final String UNRECORDABLE_RESULT_WITHOUT_TRANSACTION = "the call has run, and the finish phase with it (without a"
            + " transaction, so what it did stands): nothing of the result was written, and" + UNRECORDED_TAIL;
    /** What the recovery point is called in a message. */
    private static final String RECOVERY_POINT = "the encoded recovery point (the prepare phase's value)";
    private static final String POINT_ADVICE = ". Return a smaller value from prepare (an id to look the rest up by), or raise the limit";
    /** What a prepare value that cannot be recorded leaves, in a transaction: nothing. */
    private static final String UNRECORDABLE_POINT = "the claim's transaction was rolled back, the prepare's writes with it: nothing of"
            + " the key was recorded, and the call did not run" + POINT_ADVICE;
    /** The same on a store without transactions, whose claim had taken effect: withdrawn. */
    private static final String UNRECORDABLE_POINT_WITHDRAWN = "nothing of it was written and the claim was withdrawn: nothing of the"
            + " key is recorded, and the call did not run (the prepare phase ran without a transaction, so what it did stands)"
            + POINT_ADVICE;
    /** The same if the store could only end the claim's lease. */
    private static final String UNRECORDABLE_POINT_RELEASED = "nothing of it was written and the claim's lease was ended: the key"
            + " stays in progress without a recovery point, the next attempt takes it over at once, and the call did not run (the"
            + " prepare phase ran without a transaction, so what it did stands)" + POINT_ADVICE;
    /** The same if the withdrawal itself failed (attached as suppressed). */
    private static final String UNRECORDABLE_POINT_NOT_WITHDRAWN = "nothing of it was written, and the claim could not be withdrawn"
            + " (the store's failure is attached): the key stays in progress until its lease ends by the store's clock, and the call"
            + " did not run (the prepare phase ran without a transaction, so what it did stands)" + POINT_ADVICE;

    private final Kernel<C> kernel;
    private final LeasingStore<C> store;
    private final OwnTransactions<C> transactions;
    private final LeasePolicy leases;
    private final StoreUnavailablePolicy unavailableStore;
    /** Whether the store has no transactions: each primitive took effect when it returned, and nothing rolls back. */
    private final boolean leaseOnly;

    LeaseProtocol(Kernel<C> kernel, LeasingStore<C> store, OwnTransactions<C> transactions, LeasePolicy leases,
                  StoreUnavailablePolicy unavailableStore) {
        this.kernel = kernel;
        this.store = store;
        this.transactions = transactions;
        this.leases = leases;
        this.unavailableStore = unavailableStore;
        this.leaseOnly = store instanceof LeaseOnlyStore;
    }

    /** Runs {@code phases} for {@code key} under a lease; the key is validated and the phases' codec checked. */
    <T, X extends Exception> Outcome<T> run(IdempotencyKey key, Fingerprint fingerprint, Phases<C, T, X> phases) throws X {
        return run(key, fingerprint, phases, false);
    }

    /**
     * Resumes a named operation whose lease ended, for the recovery worker: as {@link #run}, but a
     * live holder is not waited for (its answer, {@code InProgress}, is returned at once), and a
     * record taken over without a recovery point is given back untouched (the take-over rolled back)
     * instead of running the prepare, which only the operation's client can run.
     *
     * @return the outcome, or {@code null} if the record had no recovery point to resume from
     */
    <T, X extends Exception> Outcome<T> resume(IdempotencyKey key, Fingerprint fingerprint, Phases<C, T, X> phases) throws X {
        return run(key, fingerprint, phases, true);
    }

    private <T, X extends Exception> Outcome<T> run(IdempotencyKey key, Fingerprint fingerprint, Phases<C, T, X> phases,
                                                    boolean resumeOnly) throws X {
        String token = HexFormat.of().formatHex(randomBytes());
        LeaseRequest request = kernel.leaseRequest(key, fingerprint, token, leases.lease());
        long deadline = System.nanoTime() + leases.waitForHolder().toNanos();
        Claimed claimed;
        while (true) {
            try {
                claimed = transactions.withRetries(key, () -> claimTransaction(request, phases, resumeOnly));
            } catch (OutOfTheClaim out) {
                if (!(out.cause instanceof StoreUnavailableException unreachable)) {
                    throw withdrawn(key, token, out);
                }
                if (resumeOnly || unavailableStore == StoreUnavailablePolicy.REFUSE) {
                    throw unreachable; // a resume never runs without the store: the worker tries again later
                }
                return withoutDeduplication(key, phases, unreachable);
            }
            if (claimed.notResumable) {
                return null;
            }
            if (claimed.claim instanceof LeaseClaim.Acquired) {
                break;
            }
            Outcome<T> answer = kernel.outcomeOf(key, fingerprint, phases.codec, claimed.claim);
            long remaining = deadline - System.nanoTime();
            if (resumeOnly || !(answer instanceof Outcome.InProgress) || remaining <= 0
                    || !OwnTransactions.pause(Duration.ofNanos(Math.min(remaining, leases.pollInterval().toNanos())))) {
                return answer; // a live lease is polled for up to the wait for its holder
            }
        }
        LeaseClaim.Acquired acquired = (LeaseClaim.Acquired) claimed.claim;
        if (acquired.attempt() > 1) {
            log.debug("Key {}: attempt {} took over an ended lease{}", key, acquired.attempt(),
                    acquired.resumeFrom() == null ? "" : ", resuming after its committed prepare");
        }
        Attempt attempt = new Attempt(key, token, acquired);
        Object prepared = claimed.prepared;
        Object called;
        try {
            called = phases.steps.call.call(attempt, prepared);
        } catch (Throwable failure) {
            if (failure instanceof LeaseLostException) {
                throw failure; // another attempt holds the key: nothing of this one to end
            }
            attempt.ending.lock();
            try {
                if (failure instanceof Exception e && kernel.isFinal(e)) {
                    return attempt.ended(recordFinalFailure(key, token, phases.steps.onFinalFailure, prepared, e, phases.operation));
                }
                endLease(key, token, failure);
                throw failure;
            } catch (Throwable ended) {
                attempt.failed(ended);
                throw ended;
            } finally {
                attempt.ending.unlock();
            }
        }
        attempt.ending.lock();
        try {
            return attempt.ended(finish(attempt, phases, prepared, called));
        } catch (Throwable ended) {
            attempt.failed(ended);
            throw ended;
        } finally {
            attempt.ending.unlock();
        }
    }

    /** The finish transaction: the finish phase and the fenced result. */
    private <T, X extends Exception> Outcome<T> finish(Attempt attempt, Phases<C, T, X> phases, Object prepared,
                                                       Object called) throws X {
        IdempotencyKey key = attempt.key;
        String token = attempt.token;
        T value;
        try {
            value = transactions.retried(key, tx -> {
                T result = phases.finish.finish(tx, prepared, called);
                Kernel.Encoded encoded;
                try {
                    encoded = kernel.encode(key, phases.codec, result, ResultTooLargeException.RESULT, unrecordableResult());
                } catch (ResultTooLargeException | ResultCodecException unrecordable) {
                    throw new OwnTransactions.RollBack(unrecordable); // the finish's writes must not commit without the result
                }
                try {
                    store.completeLeased(tx, token, kernel.leasedResult(key, encoded))
                            .orElseThrow(() -> new LeaseLostException(key, "the result"));
                } catch (ResultTooLargeException overTheStoresLimit) { // refused before it was sent: the same as the policy's
                    throw new OwnTransactions.RollBack(new ResultTooLargeException(key, overTheStoresLimit.reason(), unrecordableResult(),
                            overTheStoresLimit.size(), overTheStoresLimit.limit(), overTheStoresLimit));
                }
                delist(tx, key, phases.operation);
                return result;
            });
        } catch (LeaseLostException lost) {
            throw lost;
        } catch (OwnTransactions.RollBack unrecordable) {
            RuntimeException why = (RuntimeException) unrecordable.carried();
            this.<Object, X>recordFinalFailure(key, token, null, prepared, why, phases.operation); // what every retry gets back
            log.warn("Key {}: the call has run but its result cannot be recorded; the operation is recorded as failed", key, why);
            attempt.over = "it recorded the operation as failed (its result " + (why instanceof ResultTooLargeException
                    ? "was over the size limit" : "could not be encoded") + "), which ended its lease";
            throw why;
        } catch (Throwable failure) {
            endLease(key, token, failure);
            throw failure;
        }
        return new Outcome.Executed<>(key, value);
    }

    private <T, X extends Exception> Claimed claimTransaction(LeaseRequest request, Phases<C, T, X> phases, boolean resumeOnly)
            throws X {
        return transactions.once(tx -> {
            Claimed claimed = claimAndPrepare(tx, request, phases, resumeOnly);
            if (claimed.claim instanceof LeaseClaim.Busy || claimed.notResumable) {
                throw new OwnTransactions.RollBack(claimed); // the wait may have aborted the transaction; or nothing to resume
            }
            return claimed;
        });
    }

    private <T, X extends Exception> Claimed claimAndPrepare(C tx, LeaseRequest request, Phases<C, T, X> phases, boolean resumeOnly)
            throws X {
        LeaseClaim claim;
        try {
            claim = store.claimLease(tx, request);
        } catch (StoreUnavailableException unavailable) {
            throw new OutOfTheClaim(unavailable); // before anything ran: the policy decides
        }
        if (!(claim instanceof LeaseClaim.Acquired acquired) || !phases.hasPrepare()) {
            return new Claimed(claim, null, resumeOnly && claim instanceof LeaseClaim.Acquired);
        }
        IdempotencyKey key = request.key();
        ResultCodec<Object> codec = phases.steps.prepareCodec;
        if (acquired.resumeFrom() != null) {
            return new Claimed(claim, decodeRecoveryPoint(key, codec, acquired.resumeFrom()), false);
        }
        if (resumeOnly) {
            return new Claimed(claim, null, true);
        }
        Object prepared = phases.steps.prepare.apply(tx);
        Kernel.Encoded state;
        try {
            state = kernel.encode(key, codec, prepared, RECOVERY_POINT, leaseOnly ? UNRECORDABLE_POINT_WITHDRAWN : UNRECORDABLE_POINT);
        } catch (ResultTooLargeException | ResultCodecException unrecordable) { // the policy's limit, or the codec
            throw new OutOfTheClaim(unrecordable, false); // rolls the claim's transaction back, if there is one
        }
        boolean checkpointed;
        try {
            checkpointed = store.checkpoint(tx, key, request.ownerToken(), new RecoveryPoint(state.codec(), state.bytes()));
        } catch (ResultTooLargeException overTheStoresLimit) { // refused before it was sent
            throw new OutOfTheClaim(overTheStoresLimit, true);
        }
        if (!checkpointed || phases.operation != null && !recovering().enlist(tx, key, request.ownerToken(), phases.operation)) {
            throw new LeaseLostException(key, "the recovery point");
        }
        return new Claimed(claim, prepared, false);
    }

    /**
     * Gives up a named operation for the recovery worker: takes it over as {@link #resume} would
     * (the same claim, the recovery point decoded the same way) and records {@code why} as its final
     * failure, with the operation's own final-failure writes given the recorded prepare value, so
     * that a client that comes back gets it replayed.
     *
     * @return the recorded failure; the claim's answer if the record was not taken over (held, or
     *     settled); or {@code null} if it had no recovery point (the take-over rolled back)
     */
    <T, X extends Exception> Outcome<T> giveUp(IdempotencyKey key, Fingerprint fingerprint, Phases<C, T, X> phases,
                                               RuntimeException why) throws X {
        String token = HexFormat.of().formatHex(randomBytes());
        LeaseRequest request = kernel.leaseRequest(key, fingerprint, token, leases.lease());
        Claimed claimed;
        try {
            claimed = transactions.withRetries(key, () -> claimTransaction(request, phases, true));
        } catch (OutOfTheClaim out) {
            throw out.cause instanceof StoreUnavailableException ? out.cause : withdrawn(key, token, out);
        }
        if (claimed.notResumable) {
            return null;
        }
        if (!(claimed.claim instanceof LeaseClaim.Acquired)) {
            return kernel.outcomeOf(key, fingerprint, phases.codec, claimed.claim);
        }
        return recordFinalFailure(key, token, phases.steps.onFinalFailure, claimed.prepared, why, phases.operation);
    }

    /** Removes the named operation's entry in the transaction that records its outcome. */
    private void delist(C tx, IdempotencyKey key, String operation) {
        if (operation != null) {
            recovering().delist(tx, key);
        }
    }

    /** The store as a recovering one: the engine refuses a named operation over any other before it claims. */
    private RecoveringStore<C> recovering() {
        return (RecoveringStore<C>) store;
    }

    /**
     * Records {@code failure} as the operation's outcome, fenced, with {@code writes} (or none) in
     * the same transaction; a failure to record it ends the lease and is thrown with
     * {@code failure} attached.
     */
    private <T, X extends Exception> Outcome<T> recordFinalFailure(IdempotencyKey key, String token,
                                                                   Phases.PhaseFailure<C, Object, X> writes, Object prepared,
                                                                   Exception failure, String operation) throws X {
        FailureRecords.Failure recorded = kernel.failureOf(failure);
        Instant recordedAt;
        try {
            recordedAt = transactions.retried(key, tx -> {
                if (writes != null) {
                    writes.onFinalFailure(tx, prepared, failure);
                }
                Instant at = store.completeLeased(tx, token, kernel.leasedFailure(key, recorded))
                        .orElseThrow(() -> new LeaseLostException(key, "the final failure"));
                delist(tx, key, operation);
                return at;
            });
        } catch (LeaseLostException lost) {
            lost.addSuppressed(failure);
            throw lost;
        } catch (Throwable recording) {
            recording.addSuppressed(failure);
            endLease(key, token, recording);
            throw recording;
        }
        log.debug("Key {}: final failure {} recorded", key, recorded.type());
        return kernel.failedOutcome(key, recorded, recordedAt);
    }

    private String unrecordableResult() {
        return leaseOnly ? UNRECORDABLE_RESULT_WITHOUT_TRANSACTION : UNRECORDABLE_RESULT;
    }

    /**
     * What the caller gets for a prepare value that could not be recorded. In a transaction, the
     * claim rolled back with it; on a store without transactions the claim had taken effect, so it
     * is withdrawn here first (or, on a store that cannot, its lease ended), and the message says
     * which. A refusal of the store's own is reworded for the recovery point, its own kept as cause.
     */
    private RuntimeException withdrawn(IdempotencyKey key, String token, OutOfTheClaim out) {
        RuntimeException unrecordable = out.cause;
        String aftermath = UNRECORDABLE_POINT;
        RuntimeException withdrawalFailure = null;
        if (leaseOnly) {
            try {
                aftermath = ((LeaseOnlyStore) store).withdrawClaim(NoTransaction.NONE, key, token)
                        ? UNRECORDABLE_POINT_WITHDRAWN : UNRECORDABLE_POINT_RELEASED;
            } catch (RuntimeException withdrawal) {
                aftermath = UNRECORDABLE_POINT_NOT_WITHDRAWN;
                withdrawalFailure = withdrawal;
            }
        }
        if (unrecordable instanceof ResultTooLargeException tooLarge) {
            ResultTooLargeException told = new ResultTooLargeException(key, tooLarge.reason(), aftermath, tooLarge.size(), tooLarge.limit(),
                    out.storesOwn ? tooLarge : null);
            if (withdrawalFailure != null) {
                told.addSuppressed(withdrawalFailure);
            }
            return told;
        }
        if (withdrawalFailure != null) {
            unrecordable.addSuppressed(withdrawalFailure);
        }
        if (leaseOnly && !aftermath.equals(UNRECORDABLE_POINT_WITHDRAWN)) { // the codec's message said "withdrawn"
            unrecordable.addSuppressed(new IllegalStateException("the store " + store + " did not withdraw the claim of key " + key
                    + ": " + aftermath));
        }
        return unrecordable;
    }

    /** Ends this attempt's lease after a failure, so that a retry runs at once; a failure to do so is attached. */
    private void endLease(IdempotencyKey key, String token, Throwable failure) {
        try {
            transactions.retried(key, tx -> store.releaseLease(tx, key, token));
        } catch (RuntimeException releaseFailure) {
            failure.addSuppressed(releaseFailure);
        }
    }

    /**
     * {@link StoreUnavailablePolicy#RUN_WITHOUT_DEDUPLICATION}: the phases run once each, as for a
     * first attempt, with nothing claimed or recorded; the listener is told first.
     */
    private <T, X extends Exception> Outcome<T> withoutDeduplication(IdempotencyKey key, Phases<C, T, X> phases,
                                                                     StoreUnavailableException unavailable) throws X {
        kernel.heard().runWithoutDeduplication(key, unavailable);
        log.warn("Key {}: the store is unreachable; the call runs without deduplication, as the policy says: {}", key,
                unavailable.getMessage());
        Object prepared = phases.hasPrepare() ? transactions.retried(key, tx -> phases.steps.prepare.apply(tx)) : null;
        Object called = phases.steps.call.call(new Unrecorded(key), prepared);
        T value = transactions.retried(key, tx -> phases.finish.finish(tx, prepared, called));
        return new Outcome.Executed<>(key, value);
    }

    /**
     * What the claim's transaction ends with and the caller of the claim handles, carried out of it
     * (rolling it back, if there is one): the store unreachable before anything ran
     * ({@link StoreUnavailableException}), or a prepare value that could not be recorded.
     */
    private static final class OutOfTheClaim extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final transient RuntimeException cause;

        /** Whether the store refused the value (its own limit), rather than the policy or the codec. */
        private final boolean storesOwn;

        OutOfTheClaim(RuntimeException cause) {
            this(cause, false);
        }

        OutOfTheClaim(RuntimeException cause, boolean storesOwn) {
            super(cause.getMessage(), cause, false, false);
            this.cause = cause;
            this.storesOwn = storesOwn;
        }
    }

    /** The attempt of a call run without deduplication: no lease, so nothing to extend and nothing that ends. */
    private record Unrecorded(IdempotencyKey key) implements LeaseAttempt {
        @Override
        public int number() {
            return 1;
        }

        /** @return {@link Instant#MAX}: there is no lease that could end */
        @Override
        public Instant leaseUntil() {
            return Instant.MAX;
        }

        @Override
        public boolean resumed() {
            return false;
        }

        /** @return {@link Instant#MAX}, doing nothing: there is no lease to extend */
        @Override
        public Instant extend(Duration lease) {
            LeasePolicy.checkLease(lease);
            return Instant.MAX;
        }
    }

    private static Object decodeRecoveryPoint(IdempotencyKey key, ResultCodec<Object> codec, RecoveryPoint point) {
        if (!codec.name().equals(point.codec())) {
            throw new ResultCodecException(key, "the recovery point was recorded with codec '" + point.codec()
                    + "' but this operation's prepare phase decodes with codec '" + codec.name() + "'", null);
        }
        if (point.state() == null) {
            return null;
        }
        try {
            return codec.decode(point.state());
        } catch (Exception e) {
            throw new ResultCodecException(key, "codec '" + codec.name() + "' failed to decode the recovery point", e);
        }
    }


    private static byte[] randomBytes() {
        byte[] bytes = new byte[16];
        TOKENS.nextBytes(bytes);
        return bytes;
    }

    /**
     * What the claim transaction found, the prepare value it produced or resumed, and whether it was
     * a resume that found no recovery point (its take-over rolled back).
     */
    private record Claimed(LeaseClaim claim, Object prepared, boolean notResumable) {
    }

    /** The attempt handed to the call. */
    private final class Attempt implements LeaseAttempt {
        private final IdempotencyKey key;
        private final String token;
        private final int number;
        private final boolean resumed;
        private volatile Instant leaseUntil;
        /** Held while the attempt ends (its finish, its recorded failure, its ended lease), so that an extension waits for it. */
        private final ReentrantLock ending = new ReentrantLock();
        /** Why the attempt is over, once it is; {@code null} while it runs, or if it lost its lease. */
        private volatile String over;

        Attempt(IdempotencyKey key, String token, LeaseClaim.Acquired acquired) {
            this.key = key;
            this.token = token;
            this.number = acquired.attempt();
            this.resumed = acquired.resumeFrom() != null;
            this.leaseUntil = acquired.leaseUntil();
        }

        @Override
        public IdempotencyKey key() {
            return key;
        }

        @Override
        public int number() {
            return number;
        }

        @Override
        public Instant leaseUntil() {
            return leaseUntil;
        }

        @Override
        public boolean resumed() {
            return resumed;
        }

        @Override
        public Instant extend(Duration lease) {
            Duration checked = LeasePolicy.checkLease(lease);
            refuseIfOver();
            Optional<Instant> end = transactions.retried(key, tx -> store.extendLease(tx, key, token, checked));
            if (end.isEmpty()) {
                ending.lock(); // the attempt may be ending this moment: its own completion refused the extension
                try {
                    refuseIfOver();
                } finally {
                    ending.unlock();
                }
                throw new LeaseLostException(key, "the lease extension");
            }
            leaseUntil = end.get();
            return leaseUntil;
        }

        private void refuseIfOver() {
            String why = over;
            if (why != null) {
                throw new IllegalStateException("the lease extension of key " + key + " was refused: this attempt is over, " + why
                        + "; extend the lease only while the call runs");
            }
        }

        /**
         * Remembers that this attempt recorded {@code outcome}, so that a later extension says so
         * instead of blaming a take-over. Called while {@link #ending} is held.
         */
        <T> Outcome<T> ended(Outcome<T> outcome) {
            over = "it recorded the operation's outcome (" + outcome.status() + "), which ended its lease";
            return outcome;
        }

        /** Remembers that this attempt ended with {@code failure}, unless it lost the key. Called while {@link #ending} is held. */
        void failed(Throwable failure) {
            if (over == null && !(failure instanceof LeaseLostException)) { // a lost lease: the extension's own refusal says so
                over = "it failed (" + failure.getClass().getName() + "), and its lease was ended so that a retry runs at once";
            }
        }

        @Override
        public String toString() {
            return "LeaseAttempt[key=" + key + ", number=" + number + ", leaseUntil=" + leaseUntil + "]";
        }
    }

    /**
     * Builds a {@link ManagedIdempotency}. Not thread-safe; what it builds is.
     *
     * @param <C> the transaction type
     */}
