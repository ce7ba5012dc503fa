package dev.idempotency.spi;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * One attempt's claim on a key. Immutable and thread-safe.
 *
 * @param key the validated key
 * @param fingerprint the request's fingerprint, stored with a new claim
 * @param now the current time: records expiring at or before it count as absent
 * @param expiresAt the expiry to store with a new claim (until completion sets the final one)
 * @param lockTimeout how long to wait for another transaction holding the key
 */
public record ClaimRequest(IdempotencyKey key, Fingerprint fingerprint, Instant now, Instant expiresAt, Duration lockTimeout) {
    /**
     * @param key the validated key
     * @param fingerprint the request's fingerprint, stored with a new claim
     * @param now the current time: records expiring at or before it count as absent
     * @param expiresAt the expiry to store with a new claim (until completion sets the final one)
     * @param lockTimeout how long to wait for another transaction holding the key
     * @throws NullPointerException if any component is null
     */
    public ClaimRequest {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(now, "now");
        Objects.requireNonNull(expiresAt, "expiresAt");
        Objects.requireNonNull(lockTimeout, "lockTimeout");
    }
}
