package dev.idempotency;

import dev.idempotency.spi.Claim;
import dev.idempotency.spi.TransactionalStore;
import dev.idempotency.spi.LastWriteRefusedException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Write-last mode (its steps are listed at {@link ManagedIdempotency#writeLast}): in a transaction
 * of the library's own, run the work, then write the completed record, then commit; a refused write
 * rolls the work back and the record found answers. A final failure rolls its transaction back and
 * is recorded in another, where no work runs. The key is already validated and the listener is told
 * by the caller of this class. Thread-safe.
 *
 * @param <C> the transaction type
 */
final class WriteLastProtocol<C> {

    private static final Logger log = LoggerFactory.getLogger(WriteLastProtocol.class);

    private final Kernel<C> kernel;
    private final TransactionalStore<C> store;
    private final OwnTransactions<C> transactions;

    WriteLastProtocol(Kernel<C> kernel, TransactionalStore<C> store, OwnTransactions<C> transactions) {
        this.kernel = kernel;
        this.store = store;
        this.transactions = transactions;
    }

    <T, X extends Exception> Outcome<T> writeLast(IdempotencyKey key, Fingerprint fingerprint, ResultCodec<T> codec,
                                                  TxWork<C, T, X> work) throws X {
        return transactions.withRetries(key, () -> {
            Kernel.Recorded<T> failure;
            try {
                return writtenLast(key, fingerprint, codec, tx -> runBeforeWriting(tx, key, codec, work));
            } catch (FinalFailure carried) {
                failure = carried.recorded();
            }
            return recordFailure(key, fingerprint, codec, failure);
        });
    }

    /**
     * Records {@code failure}, a final failure whose transaction was rolled back whole (a write-last
     * one, or one that {@link ManagedIdempotency#execute(IdempotentCall, TxWork)} ran), in a
     * write-last transaction of its own in which no work runs: the failure's record is written if
     * the key has none, and a record that another attempt committed meanwhile answers instead. Not
     * retried here: the caller's step is.
     */
    <T> Outcome<T> recordFailure(IdempotencyKey key, Fingerprint fingerprint, @Nullable ResultCodec<T> codec, Kernel.Recorded<T> failure) {
        log.debug("Key {}: the work failed with a final failure; it was rolled back, and the failure is recorded", key);
        return writtenLast(key, fingerprint, codec, tx -> failure);
    }

    /**
     * One write-last transaction: {@code body} runs (the work, or nothing), then the record it returns
     * is written and the transaction committed; a refused write rolls back and answers from what held
     * the key.
     */
    private <T, X extends Exception> Outcome<T> writtenLast(IdempotencyKey key, Fingerprint fingerprint, ResultCodec<T> codec,
                                                            TxWork<C, Kernel.Recorded<T>, X> body) throws X {
        Object answer;
        try {
            answer = transactions.once(tx -> {
                store.checkTransaction(tx, key);
                Kernel.Recorded<T> recorded = body.apply(tx);
                Claim claim = store.writeLast(tx, kernel.claimRequest(key, fingerprint, kernel.now()), recorded.completion());
                if (!(claim instanceof Claim.Acquired)) {
                    throw new OwnTransactions.RollBack(claim); // the work's writes must not commit
                }
                return recorded.outcome();
            });
        } catch (LastWriteRefusedException refused) {
            answer = refused.found();
        }
        if (answer instanceof Outcome<?>) {
            @SuppressWarnings("unchecked")
            Outcome<T> committed = (Outcome<T>) answer;
            return committed;
        }
        log.debug("Key {}: already recorded or held; the work was rolled back", key);
        return kernel.outcomeOf(key, fingerprint, codec, (Claim) answer);
    }

    /**
     * Runs the work and says what to record and answer; a final failure leaves the transaction as a
     * {@link FinalFailure}, so that it is rolled back whole and the failure recorded in another.
     */
    private <T, X extends Exception> Kernel.Recorded<T> runBeforeWriting(C tx, IdempotencyKey key, ResultCodec<T> codec,
                                                                         TxWork<C, T, X> work) throws X {
        T value;
        try {
            value = work.apply(tx);
        } catch (Exception failure) {
            if (!kernel.hasFinalFailures() || !kernel.isFinal(failure)) {
                throw failure;
            }
            throw new FinalFailure(kernel.failed(key, failure));
        }
        store.checkTransaction(tx, key); // the work must not have ended the transaction: its writes would have no record
        return kernel.executed(key, codec, value, Kernel.ROLLED_BACK);
    }
}
