package dev.idempotency;

import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The store could not be reached: a connection refused or lost, a reply that did not come in time.
 * Thrown by a store whose server is separate from the application's database (Redis, DynamoDB),
 * where a failure to reach it says nothing about the business change. Lease mode refuses the call
 * with it by default, before the call runs, so that no duplicate can slip through while the store is
 * down; {@link StoreUnavailablePolicy#RUN_WITHOUT_DEDUPLICATION} runs the call instead. The HTTP
 * layer answers it with {@code 503 Service Unavailable} and {@code Retry-After}.
 *
 * <p>A claim whose reply was lost may still have reached the server: its lease then ends on its own
 * and a retry after it takes the key over.
 */
public class StoreUnavailableException extends IdempotencyStoreException {

    private static final long serialVersionUID = 1L;

    private final Duration retryAfter;

    /**
     * @param key the key concerned, or {@code null}
     * @param reason what could not be reached, and how
     * @param cause the client's own exception
     * @param retryAfter how long a caller should wait before trying again, positive
     */
    public StoreUnavailableException(@Nullable IdempotencyKey key, String reason, @Nullable Throwable cause, Duration retryAfter) {
        super(key, reason, cause);
        Objects.requireNonNull(retryAfter, "retryAfter");
        if (retryAfter.isNegative() || retryAfter.isZero()) {
            throw new IllegalArgumentException("retryAfter must be positive, was " + retryAfter);
        }
        this.retryAfter = retryAfter;
    }

    /** @return how long a caller should wait before trying again, as the store suggests */
    public Duration retryAfter() {
        return retryAfter;
    }
}
