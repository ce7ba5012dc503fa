package dev.idempotency;

import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells an engine's {@link IdempotencyListener} what the caller gets, for every mode: a listener
 * that throws is logged and ignored, so that it never changes what the caller gets (contract 8,
 * docs/contract.md). Each mode calls it once per outcome or failure it hands back, at the point
 * where that answer is final. Immutable and thread-safe.
 */
final class ListenerCalls {

    private static final Logger log = LoggerFactory.getLogger(ListenerCalls.class);

    private final IdempotencyListener listener;

    ListenerCalls(IdempotencyListener listener) {
        this.listener = listener;
    }

    /** An outcome reaches the caller; {@code started} is the {@link System#nanoTime()} of the call's start. */
    void outcome(IdempotencyKey key, Outcome.Status status, long started) {
        if (listener != IdempotencyListener.NONE) {
            Duration elapsed = since(started);
            tell("onOutcome", key, () -> listener.onOutcome(key, status, elapsed));
        }
    }

    /** A failure reaches the caller. */
    void error(IdempotencyKey key, Throwable failure, long started) {
        if (listener != IdempotencyListener.NONE) {
            Duration elapsed = since(started);
            tell("onError", key, () -> listener.onError(key, failure, elapsed));
        }
    }

    /** A transaction the library runs failed with a conflict and runs again after {@code backoff}. */
    void retry(IdempotencyKey key, int attempt, Throwable failure, Duration backoff) {
        if (listener != IdempotencyListener.NONE) {
            tell("onRetry", key, () -> listener.onRetry(key, attempt, failure, backoff));
        }
    }

    private static Duration since(long started) {
        return Duration.ofNanos(System.nanoTime() - started);
    }

    private static void tell(String callback, IdempotencyKey key, Runnable call) {
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
