package dev.idempotency.spi;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * An entry of {@link RecoveringStore#pending}: a named operation and what its record holds now.
 *
 * @param key the key
 * @param operation the name the operation was registered under
 * @param status the record's status, or {@code null} if the record is gone (purged)
 * @param fingerprint the record's fingerprint, or {@code null} if the record is gone
 * @param attempts the attempts that have taken the record so far (0 if it is gone)
 * @param leaseUntil when the current lease ends, or {@code null} if the record has none
 * @param now the store's own time when the entry was read
 */
public record PendingOperation(IdempotencyKey key, String operation, @Nullable RecordStatus status,
                               @Nullable Fingerprint fingerprint, int attempts, @Nullable Instant leaseUntil, Instant now) {

    /**
     * @param key the key
     * @param operation the name the operation was registered under
     * @param status the record's status, or {@code null} if the record is gone
     * @param fingerprint the record's fingerprint, or {@code null} if the record is gone
     * @param attempts the attempts that have taken the record so far
     * @param leaseUntil when the current lease ends, or {@code null}
     * @param now the store's own time when the entry was read
     * @throws NullPointerException if the key, the operation or the time is null
     */
    public PendingOperation {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(operation, "operation");
        Objects.requireNonNull(now, "now");
    }

    /** @return whether the record is still in progress and its lease has ended (or was released) */
    public boolean abandoned() {
        return status == RecordStatus.IN_PROGRESS && (leaseUntil == null || !leaseUntil.isAfter(now));
    }

    /** @return whether the entry outlived its operation: the record is gone or has its outcome */
    public boolean settled() {
        return status != RecordStatus.IN_PROGRESS;
    }
}
