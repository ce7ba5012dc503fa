package dev.idempotency;

import java.util.Objects;

/**
 * The idempotency key a leased operation sends to a service outside the database that deduplicates
 * on its side (a payment provider's {@code Idempotency-Key}): an opaque string, safe to send as it
 * is. {@link #id()} and {@link #toString()} are both that string, a hex SHA-256 digest of the
 * operation's scope, id and the name of the service (64 lowercase hex characters): it never shows
 * the scope (a tenant's or a user's name) or the client's own key id, and it is the same on every
 * attempt of the operation, so that the service deduplicates a call repeated after a crash.
 *
 * <p>The digest is {@code key.derive(name).id()}: {@code DownstreamKey.of(key, name).id()} and
 * {@code key.derive(name).id()} are equal.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class DownstreamKey {

    private final String id;

    private DownstreamKey(String id) {
        this.id = id;
    }

    /**
     * The downstream key of an operation for one downstream service, derived deterministically.
     *
     * @param key the operation's key
     * @param name which downstream service (the key of {@link LeaseAttempt#downstreamKey()} uses
     *     {@code "downstream"})
     * @return the same downstream key for the same key and name, a different one for another name
     * @throws NullPointerException if {@code key} or {@code name} is {@code null}
     */
    public static DownstreamKey of(IdempotencyKey key, String name) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(name, "name");
        return new DownstreamKey(key.derive(name).id());
    }

    /** @return the string to send: 64 lowercase hex characters, without the scope */
    public String id() {
        return id;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DownstreamKey other && id.equals(other.id);
    }

    @Override
    public int hashCode() {
        return id.hashCode();
    }

    /** @return {@link #id()}: safe to send, and to write to a log */
    @Override
    public String toString() {
        return id;
    }
}
