package dev.idempotency;

import dev.idempotency.spi.Claim;
import dev.idempotency.spi.TransactionalStore;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.StoredRecord;
import dev.idempotency.spi.TxSavepoint;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Transactional mode, for one key in one open transaction (the caller's, or one that
 * {@link ManagedIdempotency} runs); the steps, as {@link Idempotency} states them:
 * <ol>
 *   <li>Check the transaction; claim the key in it.</li>
 *   <li>A record found answers ({@link Kernel#outcomeOf}); the key's own running work claiming it
 *       again throws {@link NestedKeyException}; a key held past the lock timeout is
 *       {@link Outcome.InProgress}.</li>
 *   <li>Claimed: take a savepoint if the policy has final failures and the undo is
 *       {@link FinalUndo#SAVEPOINT}, run the work, check the transaction again, and record the result
 *       ({@link Kernel#executed}); a final failure is undone to the savepoint and recorded
 *       ({@link Kernel#failed}), or, with {@link FinalUndo#TRANSACTION}, thrown as a
 *       {@link FinalFailure} for the transaction's owner to roll back and record in another
 *       ({@link WriteLastProtocol#recordFailure}); any other failure releases the claim.</li>
 * </ol>
 * The key is already validated and the listener is told by the caller of this class. Thread-safe.
 *
 * @param <C> the transaction type
 */
final class TransactionalProtocol<C> {

    private static final Logger log = LoggerFactory.getLogger(TransactionalProtocol.class);
    /** The keys whose work runs now on this thread, each with its transaction, innermost last. */
    private static final ThreadLocal<List<Running>> RUNNING = ThreadLocal.withInitial(ArrayList::new);

    private final Kernel<C> kernel;
    private final TransactionalStore<C> store;

    TransactionalProtocol(Kernel<C> kernel, TransactionalStore<C> store) {
        this.kernel = kernel;
        this.store = store;
    }

    /**
     * Undoes a claim after {@code failure}, so that a caller who commits anyway leaves no key stuck
     * in progress; a failure to release is attached to {@code failure}.
     */
    static <C> void release(TransactionalStore<C> store, C tx, IdempotencyKey key, Throwable failure) {
        try {
            store.release(tx, key);
        } catch (RuntimeException releaseFailure) {
            failure.addSuppressed(releaseFailure);
        }
    }

    /**
     * Runs the protocol for {@code key} in {@code tx}; {@code codec} is {@code null} to choose a
     * built-in one, and {@code aftermath} says what a result that cannot be recorded leaves
     * ({@link Kernel#CLAIM_RELEASED} or {@link Kernel#ROLLED_BACK}), and {@code undo} how a final
     * failure's writes are undone.
     */
    <T, X extends Exception> Outcome<T> attempt(IdempotencyKey key, Fingerprint fingerprint, C tx, @Nullable ResultCodec<T> codec,
                                                Work<T, X> work, String aftermath, FinalUndo undo) throws X {
        store.checkTransaction(tx, key);
        Claim claim = store.claim(tx, kernel.claimRequest(key, fingerprint, kernel.now()));
        if (claim instanceof Claim.Acquired) {
            return runClaimed(key, tx, codec, work, aftermath, undo);
        }
        if (mayBeOwnClaim(claim, fingerprint) && runsIn(tx, key)) {
            throw new NestedKeyException(key); // its claim is this transaction's own: it would look committed and abandoned
        }
        return kernel.outcomeOf(key, fingerprint, codec, claim);
    }

    /**
     * @return whether {@code claim} found a record that the key's own running work may have claimed
     *     in the same transaction (in progress, no lease, the same fingerprint): then, if that work
     *     runs now, the call is nested ({@link NestedKeyException}), else the claim is abandoned
     */
    static boolean mayBeOwnClaim(Claim claim, Fingerprint fingerprint) {
        if (claim instanceof Claim.Existing existing) {
            StoredRecord record = existing.record();
            return record.status() == RecordStatus.IN_PROGRESS && record.leaseUntil() == null
                    && record.fingerprint().equals(fingerprint);
        }
        return false;
    }

    /**
     * The protocol's first steps for {@code key} in {@code tx}, without the work: the claim, or the
     * answer of a record found ({@link PendingCall}). The result is recorded by the call's
     * {@code complete}, which releases the claim if it cannot.
     */
    <T> PendingCall<T> begin(IdempotencyKey key, Fingerprint fingerprint, C tx, @Nullable ResultCodec<T> codec) {
        store.checkTransaction(tx, key);
        Claim claim = store.claim(tx, kernel.claimRequest(key, fingerprint, kernel.now()));
        if (!(claim instanceof Claim.Acquired)) {
            Outcome<T> answer = kernel.heard().single(key, () -> kernel.outcomeOf(key, fingerprint, codec, claim));
            return new PendingCall<>(kernel, key, answer, value -> answer, () -> { });
        }
        return new PendingCall<>(kernel, key, null, value -> {
            requireTransactionAfterWork(key, tx);
            try {
                Kernel.Recorded<T> executed = kernel.executed(key, codec, value, Kernel.CLAIM_RELEASED);
                store.complete(tx, executed.completion());
                return executed.outcome();
            } catch (RuntimeException e) {
                release(store, tx, key, e);
                throw e;
            }
        }, () -> store.release(tx, key));
    }

    /** Runs the work for a claimed key and records its result. */
    private <T, X extends Exception> Outcome<T> runClaimed(IdempotencyKey key, C tx, ResultCodec<T> codec, Work<T, X> work,
                                                           String aftermath, FinalUndo undo) throws X {
        TxSavepoint savepoint;
        try {
            savepoint = undo == FinalUndo.SAVEPOINT && kernel.hasFinalFailures() ? store.savepoint(tx) : null;
        } catch (RuntimeException e) {
            release(store, tx, key, e);
            throw e;
        }
        T value;
        List<Running> running = RUNNING.get();
        running.add(new Running(tx, key));
        try {
            value = work.call();
        } catch (Throwable failure) {
            if (undo == FinalUndo.TRANSACTION && failure instanceof Exception e && kernel.hasFinalFailures() && kernel.isFinal(e)) {
                throw new FinalFailure(kernel.failed(key, e)); // the owner rolls back whole: nothing to release
            }
            if (savepoint != null && failure instanceof Exception e && kernel.isFinal(e)) {
                try {
                    savepoint.rollback();
                    Kernel.Recorded<T> failed = kernel.failed(key, e);
                    store.complete(tx, failed.completion());
                    log.debug("Key {}: final failure {} recorded", key, e.getClass().getName());
                    return failed.outcome();
                } catch (RuntimeException recording) {
                    recording.addSuppressed(e);
                    release(store, tx, key, recording);
                    throw recording;
                }
            }
            release(store, tx, key, failure);
            throw failure;
        } finally {
            running.remove(running.size() - 1);
        }
        requireTransactionAfterWork(key, tx);
        try {
            if (savepoint != null) {
                savepoint.release();
            }
            Kernel.Recorded<T> executed = kernel.executed(key, codec, value, aftermath);
            store.complete(tx, executed.completion());
            return executed.outcome();
        } catch (RuntimeException e) {
            release(store, tx, key, e);
            throw e;
        }
    }

    /**
     * Refuses to record a result when the work has ended the transaction (a connection left in
     * auto-commit mode or closed: what the store's check can see). The claim may then be committed
     * already, with the work's writes; it is left as it is, so that no retry can run the work a
     * second time, and every later attempt is refused by name ({@link AbandonedClaimException}).
     */
    private void requireTransactionAfterWork(IdempotencyKey key, C tx) {
        try {
            store.checkTransaction(tx, key);
        } catch (TransactionRequiredException ended) {
            throw abandonedByWork(key, ended);
        } catch (RuntimeException e) {
            release(store, tx, key, e);
            throw e;
        }
    }

    /** @return the refusal of a result whose work ended its transaction, as {@code checkTransaction} found it {@code ended} */
    static AbandonedClaimException abandonedByWork(IdempotencyKey key, TransactionRequiredException ended) {
        return new AbandonedClaimException(key, "when the work returned, its transaction could no longer carry the result"
                + " (auto-commit on, the connection closed, or the transaction ended: see the cause), so the result was"
                + " not recorded and the claim was left as it is", ended);
    }

    /** @return whether the key's own work runs now on this thread, in {@code tx} */
    private static boolean runsIn(Object tx, IdempotencyKey key) {
        for (Running running : RUNNING.get()) {
            if (running.tx == tx && running.key.equals(key)) {
                return true;
            }
        }
        return false;
    }

    /** A key whose work runs now, in transaction {@code tx} (compared by identity). */
    private record Running(Object tx, IdempotencyKey key) {
    }
}
