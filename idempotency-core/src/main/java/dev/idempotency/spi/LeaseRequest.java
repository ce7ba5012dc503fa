package dev.idempotency.spi;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import java.time.Duration;
import java.util.Objects;

/**
 * An attempt to take a lease on a key ({@link LeasingStore#claimLease}). It carries durations, not
 * instants: the store reads the current time from its own clock (for a database, the server's), so
 * that application nodes whose clocks disagree still judge leases alike.
 *
 * @param key the key
 * @param fingerprint the request's fingerprint
 * @param ownerToken the attempt's random owner token (at least 128 bits), which fences its writes
 * @param lease how long the claim blocks other attempts, from the store's now
 * @param retention how long a record answers retries, from the store's now
 * @param lockTimeout how long to wait for a concurrent transaction that holds the key's row
 */
public record LeaseRequest(IdempotencyKey key, Fingerprint fingerprint, String ownerToken, Duration lease, Duration retention,
                           Duration lockTimeout) {
    /**
     * @param key the key
     * @param fingerprint the request's fingerprint
     * @param ownerToken the attempt's random owner token
     * @param lease how long the claim blocks other attempts
     * @param retention how long a record answers retries
     * @param lockTimeout how long to wait for a concurrent transaction that holds the key's row
     * @throws NullPointerException if a component is null
     * @throws IllegalArgumentException if the lease or the retention is not positive
     */
    public LeaseRequest {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(ownerToken, "ownerToken");
        Objects.requireNonNull(lease, "lease");
        Objects.requireNonNull(retention, "retention");
        Objects.requireNonNull(lockTimeout, "lockTimeout");
        if (lease.isNegative() || lease.isZero()) {
            throw new IllegalArgumentException("lease must be positive, was " + lease);
        }
        if (retention.isNegative() || retention.isZero()) {
            throw new IllegalArgumentException("retention must be positive, was " + retention);
        }
    }
}
