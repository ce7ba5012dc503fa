package dev.idempotency.spi;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A key's record as a store returns it. Immutable and thread-safe, but for the contents of
 * {@code result}, which are not copied.
 *
 * @param key the key
 * @param fingerprint the fingerprint of the request that claimed it
 * @param status its state
 * @param codec the codec name of the result, or {@code null} while in progress
 * @param result the encoded result, or {@code null}
 * @param createdAt when it was claimed
 * @param completedAt when it was completed, or {@code null} while in progress
 * @param expiresAt until when it answers retries
 * @param leaseUntil for a record in progress in lease mode, when its lease ends (by the store's
 *     clock); {@code null} for a record of transactional mode and for a completed one
 */
public record StoredRecord(IdempotencyKey key, Fingerprint fingerprint, RecordStatus status, @Nullable String codec, byte @Nullable [] result,
                           Instant createdAt, @Nullable Instant completedAt, Instant expiresAt, @Nullable Instant leaseUntil) {
    /**
     * @param key the key
     * @param fingerprint the fingerprint of the request that claimed it
     * @param status its state
     * @param codec the codec name of the result, or {@code null} while in progress
     * @param result the encoded result, or {@code null}
     * @param createdAt when it was claimed
     * @param completedAt when it was completed, or {@code null} while in progress
     * @param expiresAt until when it answers retries
     * @param leaseUntil when the lease of a record in progress in lease mode ends, or {@code null}
     * @throws NullPointerException if a required component is null
     */
    public StoredRecord {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(expiresAt, "expiresAt");
    }

    /**
     * A record without a lease: any record of transactional mode.
     *
     * @param key the key
     * @param fingerprint the fingerprint of the request that claimed it
     * @param status its state
     * @param codec the codec name of the result, or {@code null} while in progress
     * @param result the encoded result, or {@code null}
     * @param createdAt when it was claimed
     * @param completedAt when it was completed, or {@code null} while in progress
     * @param expiresAt until when it answers retries
     * @throws NullPointerException if a required component is null
     */
    public StoredRecord(IdempotencyKey key, Fingerprint fingerprint, RecordStatus status, @Nullable String codec, byte @Nullable [] result,
                        Instant createdAt, @Nullable Instant completedAt, Instant expiresAt) {
        this(key, fingerprint, status, codec, result, createdAt, completedAt, expiresAt, null);
    }
}
