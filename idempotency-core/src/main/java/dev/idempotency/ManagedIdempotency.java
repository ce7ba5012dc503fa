package dev.idempotency;

import dev.idempotency.spi.TransactionRunner;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
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
 * {@code InProgress} outcome rolls its transaction back. A final failure (per the key policy) rolls
 * the transaction back whole, the work's writes with it, and the failure is recorded in a second
 * transaction, in which no work runs, as write-last mode records one: no savepoint is taken, so work that does not fail finally pays
 * nothing for the policy's final failures. (If another attempt of the key committed in between,
 * its outcome answers instead.)
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
 * <p><b>Lease mode</b>, for work with effects outside the database, is the engine
 * {@link LeasedIdempotency}'s, and this class has no method of it. For a store that also keeps
 * leases (the JDBC store), {@link LeasedIdempotency#of(ManagedIdempotency, dev.idempotency.spi.LeasingStore)}
 * builds that engine over this one's store, key policy, clock, listener and transactions; it takes
 * the store typed as a {@link dev.idempotency.spi.LeasingStore}, so that lease mode over a store
 * that keeps no leases does not compile. A store without transactions (a
 * {@link dev.idempotency.spi.LeaseOnlyStore}: Redis, DynamoDB) is no
 * {@link dev.idempotency.spi.TransactionalStore}: it has no engine of this class, and takes
 * {@link LeasedIdempotency#of(dev.idempotency.spi.LeaseOnlyStore)}.
 *
 * <p>Instances are immutable and thread-safe: build one and share it.
 *
 * @param <C> the transaction type
 */
public final class ManagedIdempotency<C> {

    private static final Logger log = LoggerFactory.getLogger(ManagedIdempotency.class);

    private final Idempotency<C> engine;
    private final Kernel<C> kernel;
    private final OwnTransactions<C> transactions;
    private final WriteLastProtocol<C> writingLast;

    private ManagedIdempotency(Builder<C> b) {
        this.engine = b.engine;
        this.kernel = b.engine.kernel();
        this.transactions = new OwnTransactions<>(b.transactions, b.retry, kernel.heard());
        this.writingLast = new WriteLastProtocol<>(kernel, b.engine.store(), transactions);
    }

    /**
     * @param engine the engine: store, key policy, clock and listener
     * @param transactions begins and ends the transactions
     * @param <C> the transaction type
     * @return a builder with the default retry policy
     */
    public static <C> Builder<C> builder(Idempotency<C> engine, TransactionRunner<C> transactions) {
        return new Builder<>(engine, transactions);
    }

    /**
     * @param engine the engine: store, key policy, clock and listener
     * @param transactions begins and ends the transactions
     * @param <C> the transaction type
     * @return a managed engine with the default retry policy
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

    private <T, X extends Exception> Outcome<T> transact(IdempotencyKey key, Fingerprint fingerprint, @Nullable ResultCodec<T> codec,
                                                         TxWork<C, T, X> work) throws X {
        Objects.requireNonNull(key, "key");
        return kernel.heard().single(key, () -> {
            kernel.policy().validate(key);
            Objects.requireNonNull(work, "work");
            TransactionalProtocol<C> protocol = engine.transactional();
            return transactions.withRetries(key, () -> {
                try {
                    return transactions.once(tx -> rolledBackIfInProgress(
                            protocol.attempt(key, fingerprint, tx, codec, () -> work.apply(tx), Kernel.ROLLED_BACK, FinalUndo.TRANSACTION)));
                } catch (FinalFailure carried) {
                    return writingLast.recordFailure(key, fingerprint, codec, carried.recorded());
                }
            });
        });
    }

    /** @return {@code outcome}; an {@code InProgress} one rolls its transaction back, which the wait may have aborted */
    private static <T> Outcome<T> rolledBackIfInProgress(Outcome<T> outcome) {
        if (outcome instanceof Outcome.InProgress) {
            throw new OwnTransactions.RollBack(outcome);
        }
        return outcome;
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
     *   <li>Begin a transaction and check it ({@link dev.idempotency.spi.TransactionalStore#checkTransaction}).
     *       Nothing about the key is read.</li>
     *   <li>Run the work in it. If it throws, the transaction is rolled back and the exception reaches
     *       the caller unchanged: nothing is recorded, and a retry runs the work again. If the policy
     *       declares the exception final, the transaction is rolled back too, and the failure is
     *       recorded by steps 4 and 5 in a transaction of its own, where no work runs. (No savepoint is
     *       taken: a first execution pays nothing for final failures.)</li>
     *   <li>Write the record, complete ({@link dev.idempotency.spi.TransactionalStore#writeLast}), and
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
     * lease mode ({@link LeasedIdempotency}). The mode needs the library to own the commit, so it exists only here,
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

    private <T, X extends Exception> Outcome<T> writingLast(IdempotencyKey key, Fingerprint fingerprint, @Nullable ResultCodec<T> codec,
                                                            TxWork<C, T, X> work) throws X {
        Objects.requireNonNull(key, "key");
        return kernel.heard().single(key, () -> {
            kernel.policy().validate(key);
            Objects.requireNonNull(work, "work");
            return writingLast.writeLast(key, fingerprint, codec, work);
        });
    }

    /**
     * Runs a chunk of items in one transaction of the library's own, with the protocol of
     * {@link Idempotency#executeChunk(Object, List, Function, ItemWork)}, and
     * commits; a conflict rolls the whole chunk back and runs it again, and items that a concurrent
     * worker recorded meanwhile are then replayed. For a whole job, see {@link BatchJob}.
     *
     * <p>A final failure (per the key policy) is undone without a savepoint per item: the chunk runs
     * first without any, and an item's final failure rolls the whole transaction back and runs the
     * chunk again, this time with a savepoint around each item, so that only the failing item's
     * writes are undone and its failure is recorded while the others commit. A chunk in which nothing
     * fails finally pays for no savepoint; one that has a final failure runs the work of the items
     * before it twice, the first run rolled back. The
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
        Function<I, IdempotencyKey> keyOf = ChunkProtocol.keys(callOf);
        return kernel.heard().chunk(items, keyOf, () -> {
            IdempotencyKey first = items.isEmpty() ? null : callOf.apply(items.get(0)).key();
            try {
                return chunkIn(first, items, callOf, work, FinalUndo.TRANSACTION);
            } catch (FinalFailure finalFailure) {
                log.debug("Chunk from key {}: an item's failure is final; running the chunk again with a savepoint per item", first);
                return chunkIn(first, items, callOf, work, FinalUndo.SAVEPOINT);
            }
        });
    }

    private <I, T, X extends Exception> List<Outcome<T>> chunkIn(@Nullable IdempotencyKey first, List<? extends I> items,
            Function<? super I, IdempotentCall<T>> callOf, ChunkWork<C, ? super I, T, X> work, FinalUndo undo) throws X {
        return transactions.retried(first, tx -> {
            ItemWork<I, T, X> bound = item -> work.apply(tx, item);
            return ChunkProtocol.execute(kernel, engine.store(), tx, items, callOf, bound, Kernel.ROLLED_BACK, undo);
        });
    }

    OwnTransactions<C> ownTransactions() {
        return transactions;
    }

    /** @return the engine: store, key policy, clock and listener */
    public Idempotency<C> engine() {
        return engine;
    }

    /** @return what begins and ends this engine's transactions */
    public TransactionRunner<C> transactions() {
        return transactions.runner();
    }

    /** @return the retry policy */
    public RetryPolicy retryPolicy() {
        return transactions.retryPolicy();
    }

    @Override
    public String toString() {
        return "ManagedIdempotency[" + engine + ", transactions=" + transactions.runner() + ", " + transactions.retryPolicy() + "]";
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

        private Builder(Idempotency<C> engine, TransactionRunner<C> transactions) {
            this.engine = Objects.requireNonNull(engine, "engine");
            this.transactions = Objects.requireNonNull(transactions, "transactions");
        }

        /**
         * @param retry how conflicts are retried
         * @return this builder
         */
        public Builder<C> retryPolicy(RetryPolicy retry) {
            this.retry = Objects.requireNonNull(retry, "retry");
            return this;
        }

        /** @return the managed engine */
        public ManagedIdempotency<C> build() {
            return new ManagedIdempotency<>(this);
        }
    }
}
