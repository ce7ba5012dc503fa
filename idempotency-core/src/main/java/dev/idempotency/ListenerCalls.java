package dev.idempotency;

import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells an engine's {@link IdempotencyListener} what the caller gets, for every mode (contract 8,
 * docs/contract.md): each mode hands its whole answer to {@link #single} or {@link #chunk}, which
 * report it once it is final (for a mode that runs its own transaction, after the commit): one
 * {@code onOutcome} per outcome returned, or one {@code onError} for the exception thrown. A
 * listener that throws is logged and ignored, so that it never changes what the caller gets.
 * Immutable and thread-safe.
 */
final class ListenerCalls {

    private static final Logger log = LoggerFactory.getLogger(ListenerCalls.class);

    private final IdempotencyListener listener;

    ListenerCalls(IdempotencyListener listener) {
        this.listener = listener;
    }

    /** A mode's whole answer, computed once it is final: for a mode that runs its own transaction, after its commit. */
    @FunctionalInterface
    interface Answer<R, X extends Exception> {
        R get() throws X;
    }

    /**
     * Computes the answer for {@code key} and reports it: its outcome, or the exception that reaches
     * the caller, which is rethrown unchanged.
     */
    <T, X extends Exception> Outcome<T> single(IdempotencyKey key, Answer<Outcome<T>, X> answer) throws X {
        long started = System.nanoTime();
        try {
            return outcome(key, answer.get(), started);
        } catch (Throwable t) {
            error(key, t, started);
            throw t;
        }
    }

    /**
     * Reports the final outcome of {@code key}, for a mode that computes it later than it starts (the
     * reactive one): as {@link #single} does, timed from {@code started} ({@link System#nanoTime()}).
     *
     * @return {@code outcome}
     */
    <T> Outcome<T> outcome(IdempotencyKey key, Outcome<T> outcome, long started) {
        if (listener != IdempotencyListener.NONE) {
            Duration elapsed = since(started);
            tell("onOutcome", key, () -> listener.onOutcome(key, outcome.status(), elapsed));
        }
        return outcome;
    }

    /**
     * Computes a chunk's answer and reports it: one {@code onOutcome} per item, in input order, each
     * with the chunk's time; or one {@code onError}, with the key of the chunk's first item, for the
     * exception that reaches the caller, which is rethrown unchanged.
     */
    <I, T, X extends Exception> List<Outcome<T>> chunk(List<? extends I> items, @Nullable Function<? super I, IdempotencyKey> keyOf,
                                                       Answer<List<Outcome<T>>, X> answer) throws X {
        long started = System.nanoTime();
        try {
            List<Outcome<T>> outcomes = answer.get();
            if (listener != IdempotencyListener.NONE) {
                Duration elapsed = since(started);
                for (Outcome<T> outcome : outcomes) {
                    tell("onOutcome", outcome.key(), () -> listener.onOutcome(outcome.key(), outcome.status(), elapsed));
                }
            }
            return outcomes;
        } catch (Throwable t) {
            error(firstKey(items, keyOf), t, started);
            throw t;
        }
    }

    /** @return the key of the chunk's first item; {@code null} if there is none, or it cannot be had (the chunk says why) */
    private static <I> @Nullable IdempotencyKey firstKey(@Nullable List<? extends I> items, @Nullable Function<? super I, IdempotencyKey> keyOf) {
        if (items == null || items.isEmpty() || items.get(0) == null || keyOf == null) {
            return null;
        }
        try {
            return keyOf.apply(items.get(0));
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** Reports the exception that reaches the caller of {@code key}, timed from {@code started} ({@link System#nanoTime()}). */
    void error(@Nullable IdempotencyKey key, Throwable failure, long started) {
        if (listener != IdempotencyListener.NONE) {
            Duration elapsed = since(started);
            tell("onError", key, () -> listener.onError(key, failure, elapsed));
        }
    }

    /** A transaction the library runs failed with a conflict and runs again after {@code backoff}. */
    void recovery(IdempotencyKey key, String operation, RecoveryAction action, @Nullable Throwable failure) {
        if (listener != IdempotencyListener.NONE) {
            tell("onRecovery", key, () -> listener.onRecovery(key, operation, action, failure));
        }
    }

    void retry(@Nullable IdempotencyKey key, int attempt, Throwable failure, Duration backoff) {
        if (listener != IdempotencyListener.NONE) {
            tell("onRetry", key, () -> listener.onRetry(key, attempt, failure, backoff));
        }
    }

    /** An adapter tells why a replayed duplicate arrived ({@link Idempotency#reportDuplicate}). */
    void duplicate(IdempotencyKey key, String cause) {
        if (listener != IdempotencyListener.NONE) {
            tell("onDuplicate", key, () -> listener.onDuplicate(key, cause));
        }
    }

    /** Lease mode runs the call of {@code key} without deduplication: the store was unreachable. */
    void runWithoutDeduplication(IdempotencyKey key, StoreUnavailableException unavailable) {
        if (listener != IdempotencyListener.NONE) {
            tell("onRunWithoutDeduplication", key, () -> listener.onRunWithoutDeduplication(key, unavailable));
        }
    }

    private static Duration since(long started) {
        return Duration.ofNanos(System.nanoTime() - started);
    }

    private static void tell(String callback, @Nullable IdempotencyKey key, Runnable call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            log.warn("IdempotencyListener.{} failed for key {}; ignored", callback, key, e);
        }
    }

    @Override
    public String toString() {
        return "ListenerCalls[" + listener + "]";
    }
}
