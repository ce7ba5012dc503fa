package dev.idempotency.spi;

import dev.idempotency.IdempotencyKey;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What {@link LeasingStore#completeLeased} records. Times are the store's: it records its own now as
 * the completion time, and expires the record {@code retention} later.
 *
 * <p>Immutable and thread-safe, but for the contents of {@code result}, which are not copied.
 *
 * @param key the key
 * @param status {@link RecordStatus#COMPLETED} or {@link RecordStatus#FAILED}
 * @param codec the name of the codec that encoded the result
 * @param result the encoded result, or {@code null}
 * @param retention how long the record answers retries
 */
public record LeasedCompletion(IdempotencyKey key, RecordStatus status, String codec, byte @Nullable [] result, Duration retention) {
    /**
     * @param key the key
     * @param status completed or failed
     * @param codec the codec name
     * @param result the encoded result, or {@code null}
     * @param retention how long the record answers retries
     * @throws NullPointerException if a component other than {@code result} is null
     * @throws IllegalArgumentException if {@code status} is in progress
     */
    public LeasedCompletion {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(codec, "codec");
        Objects.requireNonNull(retention, "retention");
        if (status == RecordStatus.IN_PROGRESS) {
            throw new IllegalArgumentException("a completion records COMPLETED or FAILED, not IN_PROGRESS");
        }
    }
}
