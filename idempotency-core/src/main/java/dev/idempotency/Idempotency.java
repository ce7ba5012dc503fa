package dev.idempotency;

import dev.idempotency.internal.BuiltInCodecs;
import dev.idempotency.internal.FailureRecords;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.StoredRecord;
import dev.idempotency.spi.TxSavepoint;
import java.time.Instant;
import java.time.InstantSource;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine: runs a piece of work at most once per key, with the key's record checked and written
 * inside the caller's own transaction, atomically with the work's business change.
 *
 * <p>Protocol of {@code execute(call, tx, work)} in transactional mode:
 * <ol>
 *   <li>Validate the key against the {@link KeyPolicy}; an invalid key throws
 *       {@link InvalidKeyException} before any database access.</li>
 *   <li>Check the transaction ({@link IdempotencyStore#checkTransaction}): an auto-commit or closed
 *       connection throws {@link TransactionRequiredException}; nothing is written.</li>
 *   <li>Claim the key in {@code tx} ({@link IdempotencyStore#claim}). A committed, unexpired record
 *       with another fingerprint gives {@link Outcome.Mismatch}; with the same fingerprint, its
 *       result gives {@link Outcome.Replayed} (or its recorded final failure, {@link Outcome.Failed}).
 *       A record in progress that this transaction's own running work claimed (the work called
 *       execute again with its own key and fingerprint) throws {@link NestedKeyException}. A
 *       committed record still in progress, which only a work that ended its caller's
 *       transaction leaves behind, throws {@link AbandonedClaimException}.
 *       Another open transaction holding the key is waited for, up to the policy's lock timeout:
 *       if it commits, its result is replayed; if it rolls back, this attempt claims the key; if
 *       the wait runs out, {@link Outcome.InProgress}. In none of these cases does the work run.</li>
 *   <li>Run the work, which must leave {@code tx} to the caller (see {@link Work}): it must not
 *       commit, roll back, close or switch auto-commit. When it returns, the transaction is checked
 *       again ({@link IdempotencyStore#checkTransaction}); if the work ended it, the result is not
 *       recorded and {@link AbandonedClaimException} is thrown. If the work throws, the claim is
 *       released and the exception reaches the caller unchanged: nothing is recorded, the caller
 *       rolls back, and a retry runs the work again.
 *       The claim is released on every other failure too (a result that cannot be encoded or is
 *       too large, a store failure), so that no key stays in progress even if the caller commits.
 *       If the policy declares the exception final, the work's writes are instead undone to a
 *       savepoint taken before it ran, the failure is recorded, and {@link Outcome.Failed} is
 *       returned.</li>
 *   <li>Encode the result with the codec, check its size against the policy, record it in
 *       {@code tx} ({@link IdempotencyStore#complete}) and return {@link Outcome.Executed}.</li>
 * </ol>
 * The caller commits or rolls back; the engine never does either. Commit: the business change and
 * the record both exist. Roll back or crash: neither does, and a retry is safe. Since the engine
 * cannot see that commit, its {@link IdempotencyListener} hears the outcome when {@code execute}
 * returns, before the caller commits (a chunk's outcomes, one by one, when {@code executeChunk}
 * returns); {@link ManagedIdempotency}, which commits, reports after its commit.
 *
 * <p>The state of {@code tx} after each outcome: after {@code Executed}, {@code Replayed},
 * {@code Mismatch} and {@code Failed}, no statement of the library has failed and the transaction
 * is usable: commit it (a replay and a mismatch wrote nothing). After {@code InProgress} the
 * database may have aborted the transaction while it waited (PostgreSQL does): roll it back.
 * After an exception, roll back.
 *
 * <p>Instances are immutable and thread-safe: build one and share it.
 *
 * @param <C> the transaction type of the store
 */
public final class Idempotency<C> {

    private static final Logger log = LoggerFactory.getLogger(Idempotency.class);
    /** What a result that cannot be recorded leaves in the caller's transaction. */
    static final String CLAIM_RELEASED = "the claim was released: roll back the transaction to undo the work's writes";
    /** What a result that cannot be recorded leaves in a transaction that {@link ManagedIdempotency} runs. */
    static final String ROLLED_BACK = "the library rolled back the transaction it ran, the work's writes with it: nothing of the key"
            + " was recorded";
    /** The keys whose work runs on this thread now, each with its transaction, innermost last. */
    private static final ThreadLocal<List<Running>> RUNNING = ThreadLocal.withInitial(java.util.ArrayList::new);

    private final IdempotencyStore<C> store;
    private final KeyPolicy policy;
    private final InstantSource clock;
    private final ListenerCalls heard;

    private Idempotency(Builder<C> b) {
        this.store = Objects.requireNonNull(b.store.heardBy(b.listener), "store.heardBy returned no store");
        this.policy = b.policy;
        this.clock = b.clock;
        this.heard = new ListenerCalls(b.listener);
    }

    /**
     * @param store where records live
     * @param <C> the store's transaction type
     * @return a builder with the default policy, the system clock and no listener
     */
    public static <C> Builder<C> builder(IdempotencyStore<C> store) {
        return new Builder<>(store);
    }

    /**
     * @param store where records live
     * @param <C> the store's transaction type
     * @return an engine with the default policy, the system clock and no listener
     */
    public static <C> Idempotency<C> of(IdempotencyStore<C> store) {
        return builder(store).build();
    }

    /**
     * Runs {@code work} at most once for the call's key, in the caller's transaction {@code tx}
     * (the protocol above): with the call's request fingerprint, so that the same key with another
     * fingerprint gives {@link Outcome.Mismatch}, and its codec, or one chosen by the result's type
     * (see {@link IdempotentCall}). A record written by another codec than the call's (another
     * result type or format) is refused with a {@link ResultCodecException} naming the recorded
     * codec and what this call expects.
     *
     * @param call the key, fingerprint and codec
     * @param tx the caller's open transaction
     * @param work the business change
     * @param <T> the result type
     * @param <X> the work's checked exception
     * @return the outcome; never {@code null}
     * @throws X the work's own exception, unchanged
     * @throws InvalidKeyException if the policy refuses the key
     * @throws TransactionRequiredException if {@code tx} cannot carry the record atomically
     * @throws AbandonedClaimException if the work ended {@code tx}, or an earlier work left the key's claim committed
     *     without its result
     * @throws NestedKeyException if the key's own work, running in {@code tx}, calls it again
     * @throws ResultCodecException if the result cannot be encoded (no built-in codec fits it), or a replay cannot be
     *     decoded
     * @throws ResultTooLargeException if the encoded result is over the policy's limit
     * @throws IdempotencyStoreException if the store fails
     */
    public <T, X extends Exception> Outcome<T> execute(IdempotentCall<T> call, C tx, Work<T, X> work) throws X {
        Objects.requireNonNull(call, "call");
        return run(call.key(), call.fingerprint(), tx, call.codecOrNull(), work);
    }

    /**
     * The shortcut of {@link #execute(IdempotentCall, Object, Work)} for
     * {@code IdempotentCall.of(key)}: no fingerprint, a built-in codec chosen by the result's type.
     *
     * @param key the key
     * @param tx the caller's open transaction
     * @param work the business change
     * @param <T> the result type: {@code String}, {@code byte[]}, {@code Integer}, {@code Long},
     *     {@code Boolean}, {@code UUID} or {@code null}; others need a codec
     * @param <X> the work's checked exception
     * @return the outcome; never {@code null}
     * @throws X the work's own exception, unchanged
     * @throws InvalidKeyException if the policy refuses the key
     * @throws TransactionRequiredException if {@code tx} cannot carry the record atomically
     * @throws AbandonedClaimException if the work ended {@code tx}, or an earlier work left the key's claim committed
     *     without its result
     * @throws NestedKeyException if the key's own work, running in {@code tx}, calls it again
     * @throws ResultCodecException if no built-in codec fits the result, or a replay cannot be decoded
     * @throws ResultTooLargeException if the encoded result is over the policy's limit
     * @throws IdempotencyStoreException if the store fails
     */
    public <T, X extends Exception> Outcome<T> execute(IdempotencyKey key, C tx, Work<T, X> work) throws X {
        return run(key, Fingerprint.NONE, tx, null, work);
    }

    /**
     * Deletes at most {@code limit} expired records in {@code tx}; the caller commits. Run it in
     * short transactions of its own, repeatedly, until it returns less than {@code limit}.
     *
     * @param tx a transaction of the caller's, used for the delete only
     * @param limit the batch size, at least 1
     * @return the number of records deleted
     * @throws IllegalArgumentException if {@code limit} is less than 1
     * @throws IdempotencyStoreException if the store fails
     */
    public int purgeExpired(C tx, int limit) {
        Objects.requireNonNull(tx, "tx");
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, was " + limit);
        }
        return store.purgeExpired(tx, clock.instant(), limit);
    }

    /** @return the key policy, as given to {@link Builder#keyPolicy(KeyPolicy)} */
    public KeyPolicy keyPolicy() {
        return policy;
    }

    /** @return the store */
    public IdempotencyStore<C> store() {
        return store;
    }

    private <T, X extends Exception> Outcome<T> run(IdempotencyKey key, Fingerprint fingerprint, C tx,
                                                    ResultCodec<T> codec, Work<T, X> work) throws X {
        return heard.single(key, () -> {
            policy.validate(key);
            Objects.requireNonNull(tx, "tx");
            Objects.requireNonNull(work, "work");
            return attempt(key, fingerprint, tx, codec, work, CLAIM_RELEASED);
        });
    }

    private <T, X extends Exception> Outcome<T> attempt(IdempotencyKey key, Fingerprint fingerprint, C tx,
                                                        ResultCodec<T> codec, Work<T, X> work, String aftermath) throws X {
        store.checkTransaction(tx, key);
        Instant now = now();
        Claim claim = store.claim(tx, new ClaimRequest(key, fingerprint, now, now.plus(policy.retention()), policy.lockTimeout()));
        if (claim instanceof Claim.Existing existing) {
            StoredRecord record = existing.record();
            if (record.status() == RecordStatus.IN_PROGRESS && record.leaseUntil() == null && record.fingerprint().equals(fingerprint)
                    && runsIn(tx, key)) {
                throw new NestedKeyException(key); // its claim is this transaction's own: it would look committed and abandoned
            }
            return fromRecord(key, fingerprint, codec, record);
        }
        if (claim instanceof Claim.Busy) {
            log.debug("Key {} is held by another transaction past the lock timeout of {}", key, policy.lockTimeout());
            return new Outcome.InProgress<>(key);
        }
        return runClaimed(key, tx, codec, work, aftermath);
    }

    /** Runs the work for a claimed key and records its result; {@code aftermath} says what a result that cannot be recorded leaves. */
    private <T, X extends Exception> Outcome<T> runClaimed(IdempotencyKey key, C tx, ResultCodec<T> codec, Work<T, X> work,
                                                           String aftermath) throws X {
        TxSavepoint savepoint;
        try {
            savepoint = policy.hasFinalFailures() ? store.savepoint(tx) : null;
        } catch (RuntimeException e) {
            release(key, tx, e);
            throw e;
        }
        T value;
        List<Running> running = RUNNING.get();
        running.add(new Running(tx, key));
        try {
            value = work.call();
        } catch (Throwable failure) {
            if (savepoint != null && failure instanceof Exception e && isFinal(e)) {
                try {
                    return recordFinalFailure(key, tx, savepoint, e);
                } catch (RuntimeException recording) {
                    recording.addSuppressed(e);
                    release(key, tx, recording);
                    throw recording;
                }
            }
            release(key, tx, failure);
            throw failure;
        } finally {
            running.remove(running.size() - 1);
        }
        requireTransactionAfterWork(key, tx);
        try {
            if (savepoint != null) {
                savepoint.release();
            }
            ResultCodec<?> used = codecForRecord(key, codec, value, aftermath);
            byte[] encoded = encodeForRecord(key, used, value, ResultTooLargeException.RESULT, aftermath);
            Instant completedAt = now();
            store.complete(tx, new Completion(key, RecordStatus.COMPLETED, used.name(), encoded, completedAt,
                    completedAt.plus(policy.retention())));
        } catch (RuntimeException e) {
            release(key, tx, e);
            throw e;
        }
        return new Outcome.Executed<>(key, value);
    }

    /**
     * Refuses to record a result when the work has ended the caller's transaction (a connection
     * left in auto-commit mode or closed: what the store's check can see). The claim may then be
     * committed already, with the work's writes; it is left as it is, so that no retry can run the
     * work a second time, and every later attempt is refused by {@link #fromInProgressRecord}.
     */
    private void requireTransactionAfterWork(IdempotencyKey key, C tx) {
        try {
            store.checkTransaction(tx, key);
        } catch (TransactionRequiredException ended) {
            throw new AbandonedClaimException(key, "when the work returned, its transaction could no longer carry the result"
                    + " (auto-commit on, the connection closed, or the transaction ended: see the cause), so the result was"
                    + " not recorded and the claim was left as it is", ended);
        } catch (RuntimeException e) {
            release(key, tx, e);
            throw e;
        }
    }

    /**
     * Undoes this attempt's claim after a failure, so that a caller who commits anyway leaves no
     * key stuck in progress; a failure to release is attached to the original failure.
     */
    private void release(IdempotencyKey key, C tx, Throwable failure) {
        try {
            store.release(tx, key);
        } catch (RuntimeException releaseFailure) {
            failure.addSuppressed(releaseFailure);
        }
    }

    /**
     * The current time in whole milliseconds, the precision stores keep: a first outcome then
     * reports the same {@code recordedAt} as every replay of its record.
     */
    Instant now() {
        return clock.instant().truncatedTo(ChronoUnit.MILLIS);
    }

    private boolean isFinal(Exception failure) {
        try {
            return policy.isFinalFailure(failure);
        } catch (RuntimeException predicateFailure) {
            failure.addSuppressed(predicateFailure);
            log.warn("The final-failure predicate of the key policy threw; the failure is treated as not final", predicateFailure);
            return false;
        }
    }

    private <T> Outcome<T> recordFinalFailure(IdempotencyKey key, C tx, TxSavepoint savepoint, Exception failure) {
        savepoint.rollback();
        Instant completedAt = now();
        FailureRecords.Failure recorded = FailureRecords.of(failure, policy.maxResultBytes());
        store.complete(tx, new Completion(key, RecordStatus.FAILED, FailureRecords.CODEC, recorded.encode(), completedAt,
                completedAt.plus(policy.retention())));
        log.debug("Key {}: final failure {} recorded", key, recorded.type());
        return new Outcome.Failed<>(key, recorded.type(), recorded.message(), completedAt, false);
    }

    private <T> Outcome<T> fromRecord(IdempotencyKey key, Fingerprint fingerprint, ResultCodec<T> codec, StoredRecord record) {
        if (!record.fingerprint().equals(fingerprint)) {
            log.debug("Key {} was used with another fingerprint", key);
            return new Outcome.Mismatch<>(key);
        }
        Instant recordedAt = record.completedAt() != null ? record.completedAt() : record.createdAt();
        switch (record.status()) {
            case IN_PROGRESS:
                return fromInProgressRecord(key, record);
            case FAILED:
                FailureRecords.Failure failure = FailureRecords.decode(record.result());
                return new Outcome.Failed<>(key, failure.type(), failure.message(), recordedAt, true);
            case COMPLETED:
            default:
                return new Outcome.Replayed<>(key, decode(key, codec, record), recordedAt);
        }
    }

    /**
     * A committed record that is still in progress. In transactional mode no open transaction holds
     * one (an open holder's uncommitted claim is waited for, never returned as existing): its claim
     * was committed without its result, because a work committed, rolled back or switched
     * auto-commit mid-way. Nothing will ever complete it, so it is refused by name instead of being
     * answered {@link Outcome.InProgress} until its retention ends.
     */
    private <T> Outcome<T> fromInProgressRecord(IdempotencyKey key, StoredRecord record) {
        if (record.leaseUntil() != null) {
            log.debug("Key {} is held in lease mode until {}", key, record.leaseUntil());
            return new Outcome.InProgress<>(key, record.leaseUntil()); // a lease-mode attempt holds it
        }
        log.warn("Key {} has a committed record still in progress, claimed at {}: a work ended its caller's transaction", key,
                record.createdAt());
        throw new AbandonedClaimException(key, "the key's record is committed but still in progress (claimed at "
                + record.createdAt() + ", retained until " + record.expiresAt() + "), and no transaction holds it", null);
    }

    @SuppressWarnings("unchecked")
    private <T> T decode(IdempotencyKey key, ResultCodec<T> codec, StoredRecord record) {
        if (record.result() == null) {
            return null;
        }
        ResultCodec<?> use = codec;
        if (use == null) {
            use = BuiltInCodecs.byName(record.codec()).orElseThrow(() -> new ResultCodecException(key,
                    "the result was recorded with codec '" + record.codec() + "', which is not a built-in one;"
                            + " give the call that codec: IdempotentCall.of(key, codec)", null));
        } else if (!use.name().equals(record.codec())) {
            throw new ResultCodecException(key, "the result was recorded with " + BuiltInCodecs.describe(record.codec())
                    + " but this call " + BuiltInCodecs.expectation(use) + ": the result's type or format changed since the"
                    + " record was written. The work did not run and nothing was written; the record answers only through"
                    + " its own codec until its retention ends", null);
        }
        try {
            return (T) use.decode(record.result());
        } catch (Exception e) {
            throw new ResultCodecException(key, "codec '" + use.name() + "' failed to decode the recorded result", e);
        }
    }

    private static ResultCodec<?> chooseCodec(IdempotencyKey key, Object value, String aftermath) {
        if (value == null) {
            return BuiltInCodecs.NONE;
        }
        return BuiltInCodecs.forValue(value).orElseThrow(() -> new ResultCodecException(key,
                "no built-in codec for results of type " + value.getClass().getName()
                        + "; give the call one, e.g. IdempotentCall.of(key, ResultCodec.of(\"receipt-v1\", toJson, fromJson)). "
                        + sentence(aftermath), null));
    }

    @SuppressWarnings("unchecked")
    private static byte[] encode(IdempotencyKey key, ResultCodec<?> codec, Object value, String aftermath) {
        byte[] bytes;
        try {
            bytes = ((ResultCodec<Object>) codec).encode(value);
        } catch (Exception e) {
            throw new ResultCodecException(key, "codec '" + codec.name() + "' failed to encode the result of type "
                    + value.getClass().getName() + ". " + sentence(aftermath), e);
        }
        if (bytes == null) {
            throw new ResultCodecException(key, "codec '" + codec.name() + "' encoded a result as null. " + sentence(aftermath), null);
        }
        return bytes;
    }

    /** @return {@code clause} as a sentence of its own: capitalised */
    private static String sentence(String clause) {
        return Character.toUpperCase(clause.charAt(0)) + clause.substring(1);
    }

    /**
     * Runs a chunk of items in the caller's transaction, each at most once for its own key, with one
     * claim for the whole chunk and one batched recording of every result (where the store can: the
     * JDBC store claims a chunk in one {@code SELECT} and one multi-row {@code INSERT}, and records it
     * in one JDBC batch). Protocol:
     * <ol>
     *   <li>Validate every key; a key that appears twice in the chunk throws
     *       {@link DuplicateKeyInChunkException}. Nothing is read or written before.</li>
     *   <li>Check the transaction, then claim every key ({@link IdempotencyStore#claimAll}) in a fixed
     *       order (by scope, then id), so that two workers whose chunks overlap wait for each other
     *       instead of deadlocking.</li>
     *   <li>For each item, in input order: a record found gives its outcome as in
     *       {@link #execute(IdempotentCall, Object, Work)} (replay, mismatch,
     *       recorded failure) without running the work; a key held by another transaction past the lock
     *       timeout gives {@link Outcome.InProgress}; a claimed key runs the work.</li>
     *   <li>A final failure (per the key policy) of one item's work is undone to a savepoint taken
     *       before that item and recorded for that item alone; the chunk goes on. Any other exception
     *       releases every claim of the chunk and reaches the caller unchanged: roll the chunk back.</li>
     *   <li>Record every result and final failure in one batch ({@link IdempotencyStore#completeAll}),
     *       and return one outcome per item, in input order.</li>
     * </ol>
     * The caller commits or rolls back, as with {@code execute}. The listener hears one
     * {@code onOutcome} per item when this returns, or one {@code onError} (with the first item's
     * key) for the exception thrown.
     *
     * @param tx the caller's open transaction
     * @param items the chunk's items; at most a few thousand
     * @param callOf the call of an item: its key, its fingerprint (or none) and its codec (or none, to
     *     choose a built-in one by the result's type), e.g. {@code item -> IdempotentCall.of(item.key(), codec)}
     * @param work the business change for one item
     * @param <I> the item type
     * @param <T> the result type
     * @param <X> the work's checked exception
     * @return one outcome per item, in input order
     * @throws X an item's own exception, unchanged (every claim of the chunk was released)
     * @throws InvalidKeyException if the policy refuses an item's key
     * @throws DuplicateKeyInChunkException if two items have the same key
     * @throws TransactionRequiredException if {@code tx} cannot carry the records atomically
     * @throws ResultCodecException if a result cannot be encoded, or a replay cannot be decoded
     * @throws ResultTooLargeException if an encoded result is over the policy's limit
     * @throws IdempotencyStoreException if the store fails
     */
    public <I, T, X extends Exception> List<Outcome<T>> executeChunk(C tx, List<? extends I> items,
            Function<? super I, IdempotentCall<T>> callOf, ItemWork<? super I, T, X> work) throws X {
        return heard.chunk(items, Chunks.keys(callOf), () -> Chunks.execute(this, tx, items, callOf, work, CLAIM_RELEASED));
    }

    // ---- shared with ManagedIdempotency, which runs the same protocol in transactions of its own ----


    /**
     * The protocol of {@code execute} for a key already validated, in a transaction that
     * {@link ManagedIdempotency} runs, without telling the listener: that mode reports once its
     * transaction is committed. {@code codec} is {@code null} to choose a built-in one.
     */
    <T, X extends Exception> Outcome<T> attemptUnheard(IdempotencyKey key, Fingerprint fingerprint, C tx, ResultCodec<T> codec,
                                                       Work<T, X> work) throws X {
        return attempt(key, fingerprint, tx, codec, work, ROLLED_BACK);
    }

    <T> Outcome<T> outcomeOfRecord(IdempotencyKey key, Fingerprint fingerprint, ResultCodec<T> codec, StoredRecord record) {
        return fromRecord(key, fingerprint, codec, record);
    }

    /**
     * Encodes a value for the record and checks it against the size limit; {@code null} stays
     * {@code null}. {@code what} is the value, as a message names it; {@code aftermath} says what
     * the library did when the value cannot be recorded, true for the mode that calls
     * ({@link #CLAIM_RELEASED} in the caller's transaction, {@link #ROLLED_BACK} in one the library
     * runs, lease mode's own).
     */
    byte[] encodeForRecord(IdempotencyKey key, ResultCodec<?> codec, Object value, String what, String aftermath) {
        byte[] encoded = value == null ? null : encode(key, codec, value, aftermath);
        if (encoded != null && encoded.length > policy.maxResultBytes()) {
            throw new ResultTooLargeException(key, what, encoded.length, policy.maxResultBytes(), aftermath);
        }
        return encoded;
    }

    /** The codec that records {@code value}: the one given, or the built-in one for its type; {@code aftermath} as for {@link #encodeForRecord}. */
    ResultCodec<?> codecForRecord(IdempotencyKey key, ResultCodec<?> codec, Object value, String aftermath) {
        return codec != null ? codec : chooseCodec(key, value, aftermath);
    }

    boolean isFinalFailure(Exception failure) {
        return isFinal(failure);
    }

    /** What tells this engine's listener; every mode of the engine reports through it. */
    ListenerCalls heard() {
        return heard;
    }

    @Override
    public String toString() {
        return "Idempotency[store=" + store + ", policy=" + policy + "]";
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

    /**
     * Builds an {@link Idempotency}. Not thread-safe; the engine it builds is.
     *
     * @param <C> the store's transaction type
     */
    public static final class Builder<C> {
        private final IdempotencyStore<C> store;
        private KeyPolicy policy = KeyPolicy.ofDefaults();
        private InstantSource clock = InstantSource.system();
        private IdempotencyListener listener = IdempotencyListener.NONE;

        private Builder(IdempotencyStore<C> store) {
            this.store = Objects.requireNonNull(store, "store");
        }

        /**
         * @param policy key rules, retention, lock timeout, result size limit and final failures
         * @return this builder
         */
        public Builder<C> keyPolicy(KeyPolicy policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /**
         * @param clock the source of the current time (a {@link java.time.Clock} is one); tests
         *     pass a settable one
         * @return this builder
         */
        public Builder<C> clock(InstantSource clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * @param listener told about every outcome and error, with timings, in every mode built on
         *     this engine (see {@link IdempotencyListener})
         * @return this builder
         */
        public Builder<C> listener(IdempotencyListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /** @return the engine */
        public Idempotency<C> build() {
            return new Idempotency<>(this);
        }
    }
}
