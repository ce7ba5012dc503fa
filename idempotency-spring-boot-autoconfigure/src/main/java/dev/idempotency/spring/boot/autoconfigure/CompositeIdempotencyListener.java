package dev.idempotency.spring.boot.autoconfigure;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.Outcome;
import dev.idempotency.RecoveryAction;
import dev.idempotency.StoreUnavailableException;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Tells every listener of the context, in order; one that throws is logged and does not stop the others. */
final class CompositeIdempotencyListener implements IdempotencyListener {

    private static final Logger log = LoggerFactory.getLogger(CompositeIdempotencyListener.class);

    private final List<IdempotencyListener> listeners;

    private CompositeIdempotencyListener(List<IdempotencyListener> listeners) {
        this.listeners = listeners;
    }

    static IdempotencyListener of(List<IdempotencyListener> listeners) {
        return switch (listeners.size()) {
            case 0 -> IdempotencyListener.NONE;
            case 1 -> listeners.get(0);
            default -> new CompositeIdempotencyListener(List.copyOf(listeners));
        };
    }

    @Override
    public void onOutcome(IdempotencyKey key, Outcome.Status status, Duration elapsed) {
        tell(l -> l.onOutcome(key, status, elapsed));
    }

    @Override
    public void onError(@Nullable IdempotencyKey key, Throwable failure, Duration elapsed) {
        tell(l -> l.onError(key, failure, elapsed));
    }

    @Override
    public void onRetry(@Nullable IdempotencyKey key, int attempt, Throwable failure, Duration backoff) {
        tell(l -> l.onRetry(key, attempt, failure, backoff));
    }

    @Override
    public void onRunWithoutDeduplication(IdempotencyKey key, StoreUnavailableException unavailable) {
        tell(l -> l.onRunWithoutDeduplication(key, unavailable));
    }

    @Override
    public void onDuplicate(IdempotencyKey key, String cause) {
        tell(l -> l.onDuplicate(key, cause));
    }

    @Override
    public void onRecovery(IdempotencyKey key, String operation, RecoveryAction action, @Nullable Throwable failure) {
        tell(l -> l.onRecovery(key, operation, action, failure));
    }

    @Override
    public void onNonDurableCommits(String database, String setting) {
        tell(l -> l.onNonDurableCommits(database, setting));
    }

    @Override
    public void onAbandonedClaimsPurged(int count) {
        tell(l -> l.onAbandonedClaimsPurged(count));
    }

    private void tell(Consumer<IdempotencyListener> call) {
        for (IdempotencyListener listener : listeners) {
            try {
                call.accept(listener);
            } catch (RuntimeException e) {
                log.warn("Idempotency listener {} failed; the others are still told", listener, e);
            }
        }
    }

    @Override
    public String toString() {
        return "CompositeIdempotencyListener" + listeners;
    }
}
