package dev.idempotency;

import dev.idempotency.spi.TransactionRunner;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transactions that the library runs itself, for every mode of {@link ManagedIdempotency}:
 * begun and committed by the {@link TransactionRunner}, run again whole on a conflict the database
 * resolved by aborting one, up to the {@link RetryPolicy}'s attempts, after a pause with jitter,
 * each retry told to the listener. Immutable and thread-safe.
 *
 * @param <C> the transaction type
 */
final class OwnTransactions<C> {

    private static final Logger log = LoggerFactory.getLogger(OwnTransactions.class);

    private final TransactionRunner<C> runner;
    private final RetryPolicy retry;
    private final ListenerCalls heard;

    OwnTransactions(TransactionRunner<C> runner, RetryPolicy retry, ListenerCalls heard) {
        this.runner = runner;
        this.retry = retry;
        this.heard = heard;
    }

    /** A step that may be run again. */
    @FunctionalInterface
    interface Step<R, X extends Exception> {
        R run() throws X;
    }

    /** Runs {@code body} in a transaction of its own, committed, retried whole on conflicts. */
    <R, X extends Exception> R retried(@Nullable IdempotencyKey key, TxWork<C, R, X> body) throws X {
        return withRetries(key, () -> runner.inTransaction(body));
    }

    /**
     * Runs {@code body} in one transaction, not retried here: the caller retries the step it belongs
     * to. If {@code body} throws {@link RollBack}, the transaction is rolled back and what it carries
     * is returned.
     */
    @SuppressWarnings("unchecked")
    <R, X extends Exception> R once(TxWork<C, R, X> body) throws X {
        try {
            return runner.inTransaction(body);
        } catch (RollBack rolledBack) {
            return (R) rolledBack.carried;
        }
    }

    /** Runs {@code step}, again after a pause while it fails with a conflict, up to the policy's attempts. */
    <R, X extends Exception> R withRetries(@Nullable IdempotencyKey key, Step<R, X> step) throws X {
        for (int attempt = 1; ; attempt++) {
            try {
                return step.run();
            } catch (Exception failure) {
                if (attempt >= retry.maxAttempts() || failure instanceof LeaseLostException || !runner.isRetryable(failure)) {
                    throw failure;
                }
                Duration backoff = retry.backoff(attempt, () -> ThreadLocalRandom.current().nextDouble());
                log.debug("Key {}: attempt {} of the transaction ended in a conflict; retrying in {}", key, attempt, backoff);
                heard.retry(key, attempt, failure, backoff);
                if (!pause(backoff)) {
                    throw failure;
                }
            }
        }
    }

    /** @return {@code false} if the thread was interrupted (its flag is set again) */
    static boolean pause(Duration duration) {
        try {
            Thread.sleep(duration.toMillis(), (int) (duration.toNanos() % 1_000_000));
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    TransactionRunner<C> runner() {
        return runner;
    }

    RetryPolicy retryPolicy() {
        return retry;
    }

    /**
     * Thrown inside {@link #once}: rolls the transaction back and carries an answer out of it (an
     * {@code InProgress} outcome after a wait that may have aborted the transaction, a refused write,
     * a result too large to record).
     */
    static final class RollBack extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final transient Object carried;

        RollBack(Object carried) {
            super("rolled back, carrying an answer", null, false, false);
            this.carried = carried;
        }

        Object carried() {
            return carried;
        }
    }
}
