package dev.idempotency.spi;

import dev.idempotency.IdempotencyKey;
import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What to record for a claimed key once its work has finished. Immutable and thread-safe, but for
 * the contents of {@code result}, which are not copied.
 *
 * @param key the claimed key
 * @param status {@link RecordStatus#COMPLETED} or {@link RecordStatus#FAILED}
 * @param codec the name of the codec that encoded {@code result}
 * @param result the encoded result, or {@code null} for a {@code null} result
 * @param completedAt when the work finished
 * @param expiresAt until when the record answers retries
 */
public record Completion(IdempotencyKey key, RecordStatus status, String codec, byte @Nullable [] result, Instant completedAt, Instant expiresAt) {
    /**
     * @param key the claimed key
     * @param status {@link RecordStatus#COMPLETED} or {@link RecordStatus#FAILED}
     * @param codec the name of the codec that encoded {@code result}
     * @param result the encoded result, or {@code null} for a {@code null} result
     * @param completedAt when the work finished
     * @param expiresAt until when the record answers retries
     * @throws NullPointerException if a required component is null; IllegalArgumentException for IN_PROGRESS
     */
    public Completion {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(codec, "codec");
        Objects.requireNonNull(completedAt, "completedAt");
        Objects.requireNonNull(expiresAt, "expiresAt");
        if (status == RecordStatus.IN_PROGRESS) {
            throw new IllegalArgumentException("a completion records COMPLETED or FAILED, not IN_PROGRESS");
        }
    }
}
