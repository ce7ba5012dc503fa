package dev.idempotency;

import dev.idempotency.internal.FailureRecords;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.LastWriteRefusedException;
import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.LeasedCompletion;
import dev.idempotency.spi.LeasingStore;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.RecoveryPoint;
import dev.idempotency.spi.TransactionRunner;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine of the modes in which the library runs the transactions itself, over a
 * {@link TransactionRunner} (a {@code DataSource}, a Jdbi instance): the transactional mode run for
 * the caller, with whole-transaction retries, and lease mode with recovery phases, for work with
 * effects outside the database.
 *
 * <p><b>Transactional mode, run for you</b> ({@link #execute(IdempotentCall, TxWork)}): begin a
 * transaction, run {@link Idempotency}'s protocol in it (claim, work, record), commit. A conflict
 * that the database resolves by aborting the transaction (serialization failure, deadlock, a
 * cluster's certification failure at {@code COMMIT}) rolls it back whole; it is run again, up to the
 * {@link RetryPolicy}'s attempts, after a pause with jitter, and the retry replays the winner's
 * result. Each retry reaches the listener ({@link IdempotencyListener#onRetry}). An
 * {@code InProgress} outcome rolls its transaction back.
 *
 * <p><b>The listener</b>, in every mode here, hears what the caller gets, once, after the commit:
 * one {@code onOutcome} per outcome returned (per item, for a chunk), one {@code onError} for an
 * exception that reaches the caller (a commit that the database refused, or the last conflict,
 * included), and one {@code onRetry} per attempt run again; an attempt that is retried is never
 * heard as an outcome.
 *
 * <p><b>Write-last mode</b> ({@link #writeLast(IdempotentCall, TxWork)}), opt-in, for work
 * that is only database writes and harmless to run twice: the work first, then the completed record,
 * then the commit; a duplicate runs the work and rolls it back before it replays. See that method.
 *
 * <p><b>Lease mode</b> ({@link #lease}, {@link #run}), for an operation in phases (see
 * {@link Phases}):
 * <ol>
 *   <li>Validate the key; an invalid key throws {@link InvalidKeyException} before any access.</li>
 *   <li>In a short transaction of the engine's own, claim the key under a lease with a fresh random
 *       owner token (128 bits), judged by the store's clock ({@link LeasingStore#claimLease}). A
 *       completed record replays (or is a mismatch); a live lease of another attempt gives
 *       {@link Outcome.InProgress} with the lease's end and its remaining time by the store's clock,
 *       after polling for up to
 *       {@link LeasePolicy#waitForHolder()}; a lease that ended is taken over, counting one more
 *       attempt. In the same transaction, run the <i>prepare</i> phase and record its value as the
 *       recovery point; an attempt that resumes a committed prepare decodes its value instead and
 *       does not run it again. Commit.</li>
 *   <li>Run the <i>call</i> outside any transaction, with a {@link LeaseAttempt}: the attempt number,
 *       the downstream key (the same on every attempt), the lease end, and a way to extend the
 *       lease.</li>
 *   <li>If the call throws a failure that the key policy declares final: in one transaction, run the
 *       final-failure writes and record the failure, fenced by the owner token; return
 *       {@link Outcome.Failed}, replayed to every retry. Any other failure: end the lease at once
 *       ({@link LeasingStore#releaseLease}, keeping the recovery point) so that a retry resumes
 *       without waiting, and rethrow it unchanged.</li>
 *   <li>In one transaction, run the <i>finish</i> phase and record the result, fenced: if another
 *       attempt took the key over meanwhile, the transaction rolls back and
 *       {@link LeaseLostException} is thrown; nothing of this attempt is recorded. Otherwise return
 *       {@link Outcome.Executed}. A finish that throws rolls back, and the lease is ended as in 4. A
 *       result over the policy's size limit rolls back too, but the call has run: the operation is
 *       recorded as failed, fenced, and {@link ResultTooLargeException} is thrown; every retry gets
 *       {@link Outcome.Failed} back and the call is not run again.</li>
 * </ol>
 * A process that dies anywhere leaves at most a committed claim (and prepare) whose lease ends on
 * its own; the next attempt after that takes it over and resumes. Every short transaction of the
 * engine is retried on conflicts as in transactional mode.
 *
 * <p>Instances are immutable and thread-safe: build one and share it.
 *
 * @param <C> the transaction type
 */
public final class ManagedIdempotency<C> {

    private static final Logger log = LoggerFactory.getLogger(ManagedIdempotency.class);
    private static final SecureRandom TOKENS = new SecureRandom();

    private final Idempotency<C> engine;
    private final TransactionRunner<C> transactions;
    private final RetryPolicy retry;
    private final LeasePolicy leases;

    private ManagedIdempotency(Builder<C> b) {
        this.engine = b.engine;
        this.transactions = b.transactions;
        this.retry = b.retry;
        this.leases = b.leases;
    }

    /**
     * @param engine the engine: store, key policy, clock and listener
     * @param transactions begins and ends the transactions
     * @param <C> the transaction type
     * @return a builder with the default retry and lease policies
     */
    public static <C> Builder<C> builder(Idempotency<C> engine, TransactionRunner<C> transactions) {
        return new Builder<>(engine, transactions);
    }

    /**
     * @param engine the engine: store, key policy, clock and listener
     * @param transactions begins and ends the transactions
     * @param <C> the transaction type
     * @return a managed engine with the default retry and lease policies
     */
    public static <C> ManagedIdempotency<C> of(Idempotency<C> engine, TransactionRunner<C> transactions) {
        return builder(engine, transactions).build();
    }

    // ---- transactional mode, run for the caller -------------------------------------------------

    /**
     * Runs {@code work} at most once for the call's key, in a transaction of the library's own that
     * it commits, retrying conflicts; with the call's fingerprint and codec, or one chosen by the
     * result's type, as in {@link Idempotency#execute(IdempotentCall, Object, Work)}.
     *
     * @param call the key, fingerprint and codec
     * @param work the business change, given the open transaction; it must not commit or roll back
     * @param <T> the result type
     * @param <X> the work's checked exception
     * @return the outcome; never {@code null}
     * @throws X the work's own exception, unchanged (the transaction was rolled back)
     * @throws InvalidKeyException if the policy refuses the key
     * @throws TransactionConflictException if every attempt ended in a conflict
     * @throws ResultCodecException if the result cannot be encoded (no built-in codec fits it), or a replay cannot be
     *     decoded
     * @throws ResultTooLargeException if the encoded result is over the policy's limit
     * @throws IdempotencyStoreException if the store or the database fails
     */
    public <T, X extends Exception> Outcome<T> execute(IdempotentCall<T> call, TxWork<C, T, X> work) throws X {
        Objects.requireNonNull(call, "call");
        return transact(call.key(), call.fingerprint(), call.codecOrNull(), work);
    }

    /**
     * The shortcut of {@link #execute(IdempotentCall, TxWork)} for {@code IdempotentCall.of(key)}:
     * no fingerprint, a built-in codec chosen by the result's type.
     *
     * @param key the key
     * @param work the business change, given the open transaction; it must not commit or roll back
     * @param <T> the result type
     * @param <X> the work's checked exception
     * @return the outcome; never {@code null}
     * @throws X the work's own exception, unchanged (the transaction was rolled back)
     * @throws InvalidKeyException if the policy refuses the key
     * @throws TransactionConflictException if every attempt ended in a conflict
     * @throws ResultCodecException if no built-in codec fits the result, or a replay cannot be decoded
     * @throws ResultTooLargeException if the encoded result is over the policy's limit
     * @throws IdempotencyStoreException if the store or the database fails
     */
    public <T, X extends Exception> Outcome<T> execute(IdempotencyKey key, TxWork<C, T, X> work) throws X {
        return transact(key, Fingerprint.NONE, null, work);
    }

    private <T, X extends Exception> Outcome<T> transact(IdempotencyKey key, Fingerprint fingerprint, ResultCodec<T> codec,
                                                         TxWork<C, T, X> work) throws X {
        Objects.requireNonNull(key, "key");
        return engine.heard().single(key, () -> {
            engine.keyPolicy().validate(key);
            Objects.requireNonNull(work, "work");
            return withRetries(key, () -> {
                try {
                    return transactions.inTransaction(tx -> {
                        Outcome<T> outcome = engine.attemptUnheard(key, fingerprint, tx, codec, () -> work.apply(tx));
                        if (outcome instanceof Outcome.InProgress) {
                            throw new RollBack(outcome); // the wait may have aborted the transaction
                        }
                        return outcome;
                    });
                } catch (RollBack rolledBack) {
                    @SuppressWarnings("unchecked")
                    Outcome<T> outcome = (Outcome<T>) rolledBack.carried;
                    return outcome;
                }
            });
        });
    }

    // ---- write-last mode, opt-in -------------------------------------------------------------------

    /**
     * Write-last mode: runs {@code work} first and writes the key's record last, complete with its
     * result, in a transaction of the library's own that it commits; for work whose effects are all
     * in that transaction. A first execution costs the work's own transaction plus one write (on
     * PostgreSQL through {@code JdbcTransactions}, sent with the {@code COMMIT} in the same round
     * trip), where {@link #execute(IdempotentCall, TxWork)} first claims the key and only then runs
     * the work. Protocol:
     * <ol>
     *   <li>Validate the key; an invalid key throws {@link InvalidKeyException} before any access.</li>
     *   <li>Begin a transaction and check it ({@link dev.idempotency.spi.IdempotencyStore#checkTransaction}).
     *       Nothing about the key is read.</li>
     *   <li>Run the work in it. If it throws, the transaction is rolled back and the exception reaches
     *       the caller unchanged: nothing is recorded, and a retry runs the work again. If the policy
     *       declares the exception final, the transaction is rolled back too, and the failure is
     *       recorded by steps 4 and 5 in a transaction of its own, where no work runs. (No savepoint is
     *       taken: a first execution pays nothing for final failures.)</li>
     *   <li>Write the record, complete ({@link dev.idempotency.spi.IdempotencyStore#writeLast}), and
     *       commit. The write is refused if the key has an unexpired record, so that such a
     *       transaction never commits; an expired record is replaced by the same write. A concurrent
     *       first execution of the key that is still open is waited for, up to the policy's lock
     *       timeout: if it commits, this write is refused; if it rolls back, this one goes on.</li>
     *   <li>Written and committed: {@link Outcome.Executed} (or {@link Outcome.Failed}, for a final
     *       failure). Refused: the transaction is rolled back, <b>the work's writes with it</b>, and
     *       the record found answers as in {@link #execute(IdempotentCall, TxWork)}: its result
     *       replayed, {@link Outcome.Mismatch} for another fingerprint, its recorded failure replayed,
     *       {@link Outcome.InProgress} for a key held in lease mode or past the lock timeout.</li>
     * </ol>
     * A conflict that the database resolves by aborting the transaction is retried whole, as in
     * {@link #execute(IdempotentCall, TxWork)}.
     *
     * <p><b>What it promises:</b> the same as {@link #execute(IdempotentCall, TxWork)} for what is
     * committed: at most one transaction per key commits, with the key's record and the work's
     * writes together, and every retry while the record is kept answers with that transaction's
     * outcome. Nothing of the work is visible to other transactions before the commit.
     *
     * <p><b>What it does not:</b> a retry, and a concurrent duplicate, <b>run the work</b> before
     * they find the record, and only then roll it back and replay. So the work must have no effect
     * outside its transaction: no message sent, no HTTP call, no file written, no non-transactional
     * sequence or counter relied on (a sequence value it took stays taken), and nothing that takes
     * long or locks much, since every duplicate pays for it. Effects outside the database belong in
     * {@link #run lease mode}. The mode needs the library to own the commit, so it exists only here,
     * over a {@link TransactionRunner}, and not in {@link Idempotency}, whose caller commits: a
     * transaction of the caller's own cannot be given to it.
     *
     * @param call the key, fingerprint and codec
     * @param work the business change, given the open transaction; it must not commit or roll back
     * @param <T> the result type
     * @param <X> the work's checked exception
     * @return the outcome; never {@code null}
     * @throws X the work's own exception, unchanged (the transaction was rolled back)
     * @throws InvalidKeyException if the policy refuses the key
     * @throws TransactionConflictException if every attempt ended in a conflict
     * @throws ResultCodecException if the result cannot be encoded (no built-in codec fits it), or a replay cannot be
     *     decoded
     * @throws ResultTooLargeException if the encoded result is over the policy's limit
     * @throws IdempotencyStoreException if the store or the database fails
     */
    public <T, X extends Exception> Outcome<T> writeLast(IdempotentCall<T> call, TxWork<C, T, X> work) throws X {
        Objects.requireNonNull(call, "call");
        return writingLast(call.key(), call.fingerprint(), call.codecOrNull(), work);
    }

    /**
     * The shortcut of {@link #writeLast(IdempotentCall, TxWork)} for {@code IdempotentCall.of(key)}:
     * no fingerprint, a built-in codec chosen by the result's type.
     *
     * @param key the key
     * @param work the business change, given the open transaction; it must not commit or roll back
     * @param <T> the result type
     * @param <X> the work's checked exception
     * @return the outcome; never {@code null}
     * @throws X the work's own exception, unchanged (the transaction was rolled back)
     * @throws InvalidKeyException if the policy refuses the key
     * @throws TransactionConflictException if every attempt ended in a conflict
     * @throws ResultCodecException if no built-in codec fits the result, or a replay cannot be decoded
     * @throws ResultTooLargeException if the encoded result is over the policy's limit
     * @throws IdempotencyStoreException if the store or the database fails
     */
    public <T, X extends Exception> Outcome<T> writeLast(IdempotencyKey key, TxWork<C, T, X> work) throws X {
        return writingLast(key, Fingerprint.NONE, null, work);
    }

    private <T, X extends Exception> Outcome<T> writingLast(IdempotencyKey key, Fingerprint fingerprint, ResultCodec<T> codec,
                                                            TxWork<C, T, X> work) throws X {
        Objects.requireNonNull(key, "key");
        return engine.heard().single(key, () -> {
            engine.keyPolicy().validate(key);
            Objects.requireNonNull(work, "work");
            return withRetries(key, () -> writeLastTransaction(key, fingerprint, codec, work));
        });
    }

    private <T, X extends Exception> Outcome<T> writeLastTransaction(IdempotencyKey key, Fingerprint fingerprint, ResultCodec<T> codec,
                                                                     TxWork<C, T, X> work) throws X {
        Written<T> failure;
        try {
            return writtenLast(key, fingerprint, codec, tx -> runBeforeWriting(tx, key, codec, work));
        } catch (FinalFailure carried) {
            @SuppressWarnings("unchecked")
            Written<T> recorded = (Written<T>) carried.written;
            failure = recorded;
        }
        log.debug("Key {}: the work failed with a final failure; it was rolled back, and the failure is recorded", key);
        return writtenLast(key, fingerprint, codec, tx -> failure);
    }

    /**
     * One write-last transaction: {@code body} runs (the work, or nothing), then the record it returns
     * is written and the transaction committed; a refused write rolls back and answers from what held
     * the key.
     */
    private <T, X extends Exception> Outcome<T> writtenLast(IdempotencyKey key, Fingerprint fingerprint, ResultCodec<T> codec,
                                                            TxWork<C, Written<T>, X> body) throws X {
        Claim found;
        try {
            return transactions.inTransaction(tx -> {
                IdempotencyStore<C> store = engine.store();
                store.checkTransaction(tx, key);
                Written<T> written = body.apply(tx);
                Instant now = engine.now();
                KeyPolicy policy = engine.keyPolicy();
                Claim claim = store.writeLast(tx, new ClaimRequest(key, fingerprint, now, now.plus(policy.retention()),
                        policy.lockTimeout()), written.completion);
                if (!(claim instanceof Claim.Acquired)) {
                    throw new RollBack(claim); // the work's writes must not commit
                }
                return written.outcome;
            });
        } catch (RollBack rolledBack) {
            found = (Claim) rolledBack.carried;
        } catch (LastWriteRefusedException refused) {
            found = refused.found();
        }
        if (found instanceof Claim.Existing existing) {
            log.debug("Key {}: already recorded; the work was rolled back", key);
            return engine.outcomeOfRecord(key, fingerprint, codec, existing.record());
        }
        log.debug("Key {} is held by another transaction past the lock timeout of {}; the work was rolled back", key,
                engine.keyPolicy().lockTimeout());
        return new Outcome.InProgress<>(key);
    }

    /**
     * Runs the work and says what to record and answer; a final failure leaves the transaction as a
     * {@link FinalFailure}, so that it is rolled back whole and the failure recorded in another.
     */
    private <T, X extends Exception> Written<T> runBeforeWriting(C tx, IdempotencyKey key, ResultCodec<T> codec,
                                                                 TxWork<C, T, X> work) throws X {
        KeyPolicy policy = engine.keyPolicy();
        T value;
        try {
            value = work.apply(tx);
        } catch (Exception failure) {
            if (!policy.hasFinalFailures() || !engine.isFinalFailure(failure)) {
                throw failure;
            }
            FailureRecords.Failure recorded = FailureRecords.of(failure, policy.maxResultBytes());
            Instant at = engine.now();
            throw new FinalFailure(new Written<>(new Completion(key, RecordStatus.FAILED, FailureRecords.CODEC, recorded.encode(), at,
                    at.plus(policy.retention())), new Outcome.Failed<>(key, recorded.type(), recorded.message(), at, false)));
        }
        engine.store().checkTransaction(tx, key); // the work must not have ended the transaction: its writes would have no record
        ResultCodec<?> used = engine.codecForRecord(key, codec, value, Idempotency.ROLLED_BACK);
        byte[] encoded = engine.encodeForRecord(key, used, value, ResultTooLargeException.RESULT, Idempotency.ROLLED_BACK);
        Instant at = engine.now();
        return new Written<>(new Completion(key, RecordStatus.COMPLETED, used.name(), encoded, at, at.plus(policy.retention())),
                new Outcome.Executed<>(key, value));
    }

    /** Carries a final failure's record out of the transaction it rolls back. */
    private static final class FinalFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final transient Written<?> written;

        FinalFailure(Written<?> written) {
            super("rolled back after a final failure", null, false, false);
            this.written = written;
        }
    }

    /** What a write-last transaction records, and what it answers once that is committed. */
    private record Written<T>(Completion completion, Outcome<T> outcome) {
    }

    /**
     * Runs a chunk of items in one transaction of the library's own, with the protocol of
     * {@link Idempotency#executeChunk(Object, List, Function, ItemWork)}, and
     * commits; a conflict rolls the whole chunk back and runs it again, and items that a concurrent
     * worker recorded meanwhile are then replayed. For a whole job, see {@link BatchJob}. The
     * listener hears one {@code onOutcome} per item after the commit, or one {@code onError} (with
     * the first item's key) for the exception thrown.
     *
     * @param items the chunk's items
     * @param callOf the call of an item: its key, fingerprint (or none) and codec (or none, to choose a
     *     built-in one by the result's type)
     * @param work the business change for one item, given the transaction
     * @param <I> the item type
     * @param <T> the result type
     * @param <X> the work's checked exception
     * @return one outcome per item, in input order
     * @throws X an item's own exception, unchanged (the chunk was rolled back)
     * @throws InvalidKeyException if the policy refuses an item's key
     * @throws DuplicateKeyInChunkException if two items have the same key
     * @throws TransactionConflictException if every attempt ended in a conflict
     * @throws ResultCodecException if a result cannot be encoded, or a replay cannot be decoded
     * @throws ResultTooLargeException if an encoded result is over the policy's limit
     * @throws IdempotencyStoreException if the store or the database fails
     */
    public <I, T, X extends Exception> List<Outcome<T>> executeChunk(List<? extends I> items,
            Function<? super I, IdempotentCall<T>> callOf, ChunkWork<C, ? super I, T, X> work) throws X {
        Objects.requireNonNull(items, "items");
        Objects.requireNonNull(callOf, "callOf");
        Objects.requireNonNull(work, "work");
        Function<I, IdempotencyKey> keyOf = Chunks.keys(callOf);
        return engine.heard().chunk(items, keyOf, () -> {
            IdempotencyKey first = items.isEmpty() ? null : keyOf.apply(items.get(0));
            return withRetries(first, () -> transactions.inTransaction(tx -> {
                ItemWork<I, T, X> bound = item -> work.apply(tx, item);
                return Chunks.execute(engine, tx, items, callOf, bound, Idempotency.ROLLED_BACK);
            }));
        });
    }

    // ---- lease mode ---------------------------------------------------------------------------------

    /**
     * Lease mode with a call only: runs {@code work} outside any transaction, at most once to
     * completion for the call's key, and records its result fenced by the attempt's owner token,
     * with the call's codec or one chosen by the result's type (see {@link IdempotentCall}).
     *
     * @param call the key, fingerprint and codec
     * @param work the call, given its attempt
     * @param <T> the result type
     * @param <X> the call's checked exception
     * @return the outcome; never {@code null}
     * @throws X the call's own exception, unchanged (the lease was ended, so a retry runs at once)
     * @throws InvalidKeyException if the policy refuses the key
     * @throws LeaseLostException if the lease ended and another attempt took the key over
     * @throws ResultCodecException if the result cannot be encoded (no built-in codec fits it), or a replay cannot be
     *     decoded
     * @throws ResultTooLargeException if the encoded result is over the policy's limit: the operation
     *     is recorded as failed, and no retry runs the call again
     * @throws UnsupportedOperationException if the store keeps no leases
     * @throws IdempotencyStoreException if the store or the database fails
     */
    public <T, X extends Exception> Outcome<T> lease(IdempotentCall<T> call, LeasedWork<T, X> work) throws X {
        Objects.requireNonNull(call, "call");
        return leasedRun(call.key(), call.fingerprint(), null, Phases.<C, T, X>call(work).recorded(call.codecOrNull()));
    }

    /**
     * The shortcut of {@link #lease(IdempotentCall, LeasedWork)} for {@code IdempotentCall.of(key)}:
     * no fingerprint, a built-in codec chosen by the result's type.
     *
     * @param key the key
     * @param work the call, given its attempt
     * @param <T> the result type
     * @param <X> the call's checked exception
     * @return the outcome; never {@code null}
     * @throws X the call's own exception, unchanged (the lease was ended, so a retry runs at once)
     * @throws InvalidKeyException if the policy refuses the key
     * @throws LeaseLostException if the lease ended and another attempt took the key over
     * @throws ResultCodecException if no built-in codec fits the result, or a replay cannot be decoded
     * @throws ResultTooLargeException if the encoded result is over the policy's limit: the operation
     *     is recorded as failed, and no retry runs the call again
     * @throws UnsupportedOperationException if the store keeps no leases
     * @throws IdempotencyStoreException if the store or the database fails
     */
    public <T, X extends Exception> Outcome<T> lease(IdempotencyKey key, LeasedWork<T, X> work) throws X {
        return leasedRun(key, Fingerprint.NONE, null, Phases.<C, T, X>call(work).recorded(null));
    }

    /**
     * Runs an operation in phases under a lease (see {@link Phases} and the protocol above), with
     * the call's key and fingerprint. The result's codec is the one the phases declare
     * ({@code finish(..., codec)} or {@code result(codec)}): a call that names a codec of its own
     * must name the same one.
     *
     * @param call the key and fingerprint (and, if any, the same codec as the phases')
     * @param phases the operation
     * @param <T> the result type
     * @param <X> the phases' checked exception
     * @return the outcome; never {@code null}
     * @throws X a phase's own exception, unchanged
     * @throws InvalidKeyException if the policy refuses the key
     * @throws IllegalArgumentException if the call names another codec than the phases, before any access
     * @throws LeaseLostException if the lease ended and another attempt took the key over
     * @throws ResultCodecException if a value cannot be encoded, or a recorded one decoded
     * @throws ResultTooLargeException if an encoded value is over the policy's limit: the prepare's
     *     value rolls the claim back (nothing recorded, the call not run), the result is recorded as
     *     a failure (no retry runs the call again)
     * @throws UnsupportedOperationException if the store keeps no leases
     * @throws IdempotencyStoreException if the store or the database fails
     */
    public <T, X extends Exception> Outcome<T> run(IdempotentCall<T> call, Phases<C, T, X> phases) throws X {
        Objects.requireNonNull(call, "call");
        return leasedRun(call.key(), call.fingerprint(), call.codecOrNull(), phases);
    }

    /**
     * The shortcut of {@link #run(IdempotentCall, Phases)} for {@code IdempotentCall.of(key)}: no
     * fingerprint.
     *
     * @param key the key
     * @param phases the operation
     * @param <T> the result type
     * @param <X> the phases' checked exception
     * @return the outcome; never {@code null}
     * @throws X a phase's own exception, unchanged
     * @throws InvalidKeyException if the policy refuses the key
     * @throws LeaseLostException if the lease ended and another attempt took the key over
     * @throws ResultCodecException if a value cannot be encoded, or a recorded one decoded
     * @throws ResultTooLargeException if an encoded value is over the policy's limit (see
     *     {@link #run(IdempotentCall, Phases)})
     * @throws UnsupportedOperationException if the store keeps no leases
     * @throws IdempotencyStoreException if the store or the database fails
     */
    public <T, X extends Exception> Outcome<T> run(IdempotencyKey key, Phases<C, T, X> phases) throws X {
        return leasedRun(key, Fingerprint.NONE, null, phases);
    }

    /** Lease mode for a key, with the codec that the call names ({@code null} if none), which must be the phases' own. */
    private <T, X extends Exception> Outcome<T> leasedRun(IdempotencyKey key, Fingerprint fingerprint, ResultCodec<T> named,
                                                          Phases<C, T, X> phases) throws X {
        return engine.heard().single(key, () -> {
            engine.keyPolicy().validate(key);
            Objects.requireNonNull(phases, "phases");
            if (named != null && !named.name().equals(phases.codec.name())) {
                throw new IllegalArgumentException("the call of key " + key + " names codec '" + named.name()
                        + "' but its phases record the result with codec '" + phases.codec.name() + "': give the codec once,"
                        + " to the phases (finish(..., codec) or result(codec)), and IdempotentCall.of(key, fingerprint) without"
                        + " one. Nothing was read or written");
            }
            return leased(leasingStore(), key, fingerprint, phases);
        });
    }

    private <T, X extends Exception> Outcome<T> leased(LeasingStore<C> store, IdempotencyKey key, Fingerprint fingerprint,
                                                       Phases<C, T, X> phases) throws X {
        KeyPolicy policy = engine.keyPolicy();
        String token = HexFormat.of().formatHex(randomBytes());
        LeaseRequest request = new LeaseRequest(key, fingerprint, token, leases.lease(), policy.retention(), policy.lockTimeout());
        long deadline = System.nanoTime() + leases.waitForHolder().toNanos();
        Claimed claimed;
        while (true) {
            claimed = withRetries(key, () -> claimTransaction(store, request, phases));
            LeaseClaim claim = claimed.claim;
            if (claim instanceof LeaseClaim.Existing found) {
                return engine.outcomeOfRecord(key, fingerprint, phases.codec, found.record());
            }
            if (claim instanceof LeaseClaim.Acquired) {
                break;
            }
            LeaseClaim.Held held = null;
            if (claim instanceof LeaseClaim.Held h) {
                if (!h.fingerprint().equals(fingerprint)) {
                    return new Outcome.Mismatch<>(key);
                }
                held = h;
            }
            long remaining = deadline - System.nanoTime();
            if (remaining <= 0 || !pause(Duration.ofNanos(Math.min(remaining, leases.pollInterval().toNanos())))) {
                if (held == null) {
                    return new Outcome.InProgress<>(key); // busy: an open transaction held the row past the lock timeout
                }
                log.debug("Key {} is held by another attempt; lease until {}, {} from the store's now", key, held.leaseUntil(),
                        held.remaining());
                return new Outcome.InProgress<>(key, held.leaseUntil(), held.remaining());
            }
        }
        LeaseClaim.Acquired acquired = (LeaseClaim.Acquired) claimed.claim;
        if (acquired.attempt() > 1) {
            log.debug("Key {}: attempt {} took over an ended lease{}", key, acquired.attempt(),
                    acquired.resumeFrom() == null ? "" : ", resuming after its committed prepare");
        }
        Attempt attempt = new Attempt(store, key, token, acquired);
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
                if (failure instanceof Exception e && engine.isFinalFailure(e)) {
                    return attempt.ended(recordFinalFailure(store, key, token, phases.steps.onFinalFailure, prepared, e));
                }
                endLease(store, key, token, failure);
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
            return attempt.ended(finish(store, attempt, phases, prepared, called));
        } catch (Throwable ended) {
            attempt.failed(ended);
            throw ended;
        } finally {
            attempt.ending.unlock();
        }
    }

    /** The finish transaction: the finish phase and the fenced result. */
    private <T, X extends Exception> Outcome<T> finish(LeasingStore<C> store, Attempt attempt, Phases<C, T, X> phases, Object prepared,
                                                       Object called) throws X {
        IdempotencyKey key = attempt.key;
        String token = attempt.token;
        KeyPolicy policy = engine.keyPolicy();
        T value;
        try {
            value = withRetries(key, () -> transactions.inTransaction(tx -> {
                T result = phases.finish.finish(tx, prepared, called);
                ResultCodec<?> used = engine.codecForRecord(key, phases.codec, result,
                        "the finish transaction was rolled back, the finish phase's writes with it");
                byte[] encoded;
                try {
                    encoded = engine.encodeForRecord(key, used, result, ResultTooLargeException.RESULT,
                            "the finish transaction was rolled back, the finish phase's writes with it");
                } catch (ResultTooLargeException tooLarge) {
                    throw new RollBack(tooLarge); // the finish's writes must not commit without the result
                }
                store.completeLeased(tx, token, new LeasedCompletion(key, RecordStatus.COMPLETED, used.name(), encoded,
                        policy.retention())).orElseThrow(() -> new LeaseLostException(key, "the result"));
                return result;
            }));
        } catch (LeaseLostException lost) {
            throw lost;
        } catch (RollBack tooLarge) {
            ResultTooLargeException recorded = resultNotRecordable(store, key, token, prepared, (ResultTooLargeException) tooLarge.carried);
            attempt.over = "it recorded the operation as failed (its result was over the size limit), which ended its lease";
            throw recorded;
        } catch (Throwable failure) {
            endLease(store, key, token, failure);
            throw failure;
        }
        return new Outcome.Executed<>(key, value);
    }

    /**
     * The call has run, but its result is over the size limit and the finish was rolled back: the
     * operation is recorded as failed, so that no retry runs the call again for a result that could
     * never be recorded either. Returns the exception to throw, whose message says so.
     */
    private <X extends Exception> ResultTooLargeException resultNotRecordable(LeasingStore<C> store, IdempotencyKey key, String token,
                                                                              Object prepared, ResultTooLargeException rolledBack) throws X {
        this.<Object, X>recordFinalFailure(store, key, token, null, prepared, rolledBack); // what every retry gets back
        log.warn("Key {}: the result is {} bytes, over the limit of {}; the operation is recorded as failed", key, rolledBack.size(),
                rolledBack.limit());
        return new ResultTooLargeException(key, ResultTooLargeException.RESULT, rolledBack.size(), rolledBack.limit(),
                "so it cannot be recorded. The call has run: the finish phase's writes were rolled back, and the operation is"
                        + " recorded as failed with this exception instead, which every retry with the key gets back (Outcome.Failed);"
                        + " the call is not run again. What the call did outside the database stands: settle it there by hand if need"
                        + " be, and return a smaller result (or raise the limit) for new operations");
    }

    private <T, X extends Exception> Claimed claimTransaction(LeasingStore<C> store, LeaseRequest request, Phases<C, T, X> phases)
            throws X {
        try {
            return transactions.inTransaction(tx -> {
                Claimed claimed = claimAndPrepare(store, tx, request, phases);
                if (claimed.claim instanceof LeaseClaim.Busy) {
                    throw new RollBack(claimed); // the wait may have aborted the transaction
                }
                return claimed;
            });
        } catch (RollBack rolledBack) {
            return (Claimed) rolledBack.carried;
        }
    }

    private <T, X extends Exception> Claimed claimAndPrepare(LeasingStore<C> store, C tx, LeaseRequest request,
                                                             Phases<C, T, X> phases) throws X {
        LeaseClaim claim = store.claimLease(tx, request);
        if (!(claim instanceof LeaseClaim.Acquired acquired) || !phases.hasPrepare()) {
            return new Claimed(claim, null);
        }
        IdempotencyKey key = request.key();
        ResultCodec<Object> codec = phases.steps.prepareCodec;
        if (acquired.resumeFrom() != null) {
            return new Claimed(claim, decodeRecoveryPoint(key, codec, acquired.resumeFrom()));
        }
        Object prepared = phases.steps.prepare.apply(tx);
        byte[] state = engine.encodeForRecord(key, codec, prepared, "the encoded recovery point (the prepare phase's value)",
                "the claim's transaction was rolled back, the prepare's writes with it: nothing of the key was recorded, and the"
                        + " call did not run. Return a smaller value from prepare (an id to look the rest up by), or raise the limit");
        if (!store.checkpoint(tx, key, request.ownerToken(), new RecoveryPoint(codec.name(), state))) {
            throw new LeaseLostException(key, "the recovery point");
        }
        return new Claimed(claim, prepared);
    }

    /**
     * Records {@code failure} as the operation's outcome, fenced, with {@code writes} (or none) in
     * the same transaction; a failure to record it ends the lease and is thrown with
     * {@code failure} attached.
     */
    private <T, X extends Exception> Outcome<T> recordFinalFailure(LeasingStore<C> store, IdempotencyKey key, String token,
                                                                   Phases.PhaseFailure<C, Object, X> writes, Object prepared,
                                                                   Exception failure) throws X {
        FailureRecords.Failure recorded = FailureRecords.of(failure, engine.keyPolicy().maxResultBytes());
        Instant recordedAt;
        try {
            recordedAt = withRetries(key, () -> transactions.inTransaction(tx -> {
                if (writes != null) {
                    writes.onFinalFailure(tx, prepared, failure);
                }
                return store.completeLeased(tx, token, new LeasedCompletion(key, RecordStatus.FAILED, FailureRecords.CODEC,
                        recorded.encode(), engine.keyPolicy().retention())).orElseThrow(() -> new LeaseLostException(key, "the final failure"));
            }));
        } catch (LeaseLostException lost) {
            lost.addSuppressed(failure);
            throw lost;
        } catch (Throwable recording) {
            recording.addSuppressed(failure);
            endLease(store, key, token, recording);
            throw recording;
        }
        log.debug("Key {}: final failure {} recorded", key, recorded.type());
        return new Outcome.Failed<>(key, recorded.type(), recorded.message(), recordedAt, false);
    }

    /** Ends this attempt's lease after a failure, so that a retry runs at once; a failure to do so is attached. */
    private void endLease(LeasingStore<C> store, IdempotencyKey key, String token, Throwable failure) {
        try {
            withRetries(key, () -> transactions.inTransaction(tx -> store.releaseLease(tx, key, token)));
        } catch (RuntimeException releaseFailure) {
            failure.addSuppressed(releaseFailure);
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

    @SuppressWarnings("unchecked")
    private LeasingStore<C> leasingStore() {
        if (engine.store() instanceof LeasingStore<?> store) {
            return (LeasingStore<C>) store;
        }
        throw new UnsupportedOperationException("lease mode needs a store that keeps leases (a LeasingStore); "
                + engine.store() + " does not");
    }

    // ---- retries ------------------------------------------------------------------------------------

    @FunctionalInterface
    private interface Step<R, X extends Exception> {
        R run() throws X;
    }

    private <R, X extends Exception> R withRetries(IdempotencyKey key, Step<R, X> step) throws X {
        for (int attempt = 1; ; attempt++) {
            try {
                return step.run();
            } catch (Exception failure) {
                if (attempt >= retry.maxAttempts() || failure instanceof LeaseLostException || !transactions.isRetryable(failure)) {
                    throw failure;
                }
                Duration backoff = retry.backoff(attempt, () -> ThreadLocalRandom.current().nextDouble());
                log.debug("Key {}: attempt {} of the transaction ended in a conflict; retrying in {}", key, attempt, backoff);
                engine.heard().retry(key, attempt, failure, backoff);
                if (!pause(backoff)) {
                    throw failure;
                }
            }
        }
    }

    /** @return {@code false} if the thread was interrupted (its flag is set again) */
    private static boolean pause(Duration duration) {
        try {
            Thread.sleep(duration.toMillis(), (int) (duration.toNanos() % 1_000_000));
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static byte[] randomBytes() {
        byte[] bytes = new byte[16];
        TOKENS.nextBytes(bytes);
        return bytes;
    }

    /** @return the engine: store, key policy, clock and listener */
    public Idempotency<C> engine() {
        return engine;
    }

    /** @return what begins and ends this engine's transactions */
    public TransactionRunner<C> transactions() {
        return transactions;
    }

    /** @return the retry policy */
    public RetryPolicy retryPolicy() {
        return retry;
    }

    /** @return the lease policy */
    public LeasePolicy leasePolicy() {
        return leases;
    }

    @Override
    public String toString() {
        return "ManagedIdempotency[" + engine + ", transactions=" + transactions + ", " + retry + ", " + leases + "]";
    }

    /** What the claim transaction found, and the prepare value it produced or resumed. */
    private record Claimed(LeaseClaim claim, Object prepared) {
    }

    /** Carries an answer (an {@code InProgress} outcome, a busy claim) out of a transaction that must be rolled back. */
    private static final class RollBack extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final transient Object carried;

        RollBack(Object carried) {
            super("rolled back, carrying an answer", null, false, false);
            this.carried = carried;
        }
    }

    /** The attempt handed to the call. */
    private final class Attempt implements LeaseAttempt {
        private final LeasingStore<C> store;
        private final IdempotencyKey key;
        private final String token;
        private final int number;
        private final boolean resumed;
        private volatile Instant leaseUntil;
        /** Held while the attempt ends (its finish, its recorded failure, its ended lease), so that an extension waits for it. */
        private final ReentrantLock ending = new ReentrantLock();
        /** Why the attempt is over, once it is; {@code null} while it runs, or if it lost its lease. */
        private volatile String over;

        Attempt(LeasingStore<C> store, IdempotencyKey key, String token, LeaseClaim.Acquired acquired) {
            this.store = store;
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
            Optional<Instant> end = withRetries(key, () -> transactions.inTransaction(tx -> store.extendLease(tx, key, token, checked)));
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
     */
    public static final class Builder<C> {
        private final Idempotency<C> engine;
        private final TransactionRunner<C> transactions;
        private RetryPolicy retry = RetryPolicy.ofDefaults();
        private LeasePolicy leases = LeasePolicy.ofDefaults();

        private Builder(Idempotency<C> engine, TransactionRunner<C> transactions) {
            this.engine = Objects.requireNonNull(engine, "engine");
            this.transactions = Objects.requireNonNull(transactions, "transactions");
        }

        /**
         * @param retry how conflicts are retried
         * @return this builder
         */
        public Builder<C> retry(RetryPolicy retry) {
            this.retry = Objects.requireNonNull(retry, "retry");
            return this;
        }

        /**
         * @param leases the lease length and what an attempt does on a live lease
         * @return this builder
         */
        public Builder<C> leases(LeasePolicy leases) {
            this.leases = Objects.requireNonNull(leases, "leases");
            return this;
        }

        /** @return the managed engine */
        public ManagedIdempotency<C> build() {
            return new ManagedIdempotency<>(this);
        }
    }
}
