package dev.idempotency;

import java.util.Objects;

/**
 * The identity of one logical operation: a {@code scope} chosen by the server and an {@code id}
 * supplied by the client.
 *
 * <p>The id is what a client sends in an {@code Idempotency-Key} header (a UUID in most cases).
 * The scope is chosen by the server (a tenant, a user, an operation name) so that one client's
 * key can never reach another client's record: the pair {@code (scope, id)} is the key.
 *
 * <p>Construction rejects a {@code null}, empty or blank scope or id at once; the rules on length
 * and characters belong to {@link KeyPolicy#validate(IdempotencyKey)}, which the engine applies
 * before any database access.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class IdempotencyKey {

    /** The scope used by {@link #of(String)}. */
    public static final String DEFAULT_SCOPE = "default";

    private final String scope;
    private final String id;

    private IdempotencyKey(String scope, String id) {
        this.scope = scope;
        this.id = id;
    }

    /**
     * A key in an explicit scope.
     *
     * @param scope the server-chosen scope (tenant, user, operation)
     * @param id the client-supplied key
     * @return the key
     * @throws InvalidKeyException if either argument is {@code null}, empty or blank (only
     *     whitespace)
     */
    public static IdempotencyKey of(String scope, String id) {
        requirePresent(scope, id, scope, "scope");
        requirePresent(scope, id, id, "key id");
        return new IdempotencyKey(scope, id);
    }

    private static void requirePresent(String scope, String id, String value, String what) {
        if (value == null) {
            throw new InvalidKeyException(scope, id, "the " + what + " must not be null");
        }
        if (value.isBlank()) {
            throw new InvalidKeyException(scope, id, "the " + what + " must not be blank (it is '" + IdempotencyException.printable(value) + "')");
        }
    }

    /**
     * A key in the {@link #DEFAULT_SCOPE default scope}. Prefer {@link #of(String, String)} with
     * a scope per tenant or operation wherever clients are not fully trusted.
     *
     * @param id the client-supplied key
     * @return the key
     * @throws InvalidKeyException if {@code id} is {@code null}, empty or blank
     */
    public static IdempotencyKey of(String id) {
        return of(DEFAULT_SCOPE, id);
    }

    /** @return the server-chosen scope */
    public String scope() {
        return scope;
    }

    /** @return the client-supplied id */
    public String id() {
        return id;
    }

    /**
     * A key derived deterministically from this one, for a downstream call that deduplicates on
     * its own side (a payment provider's idempotency key, for example). The same key and name
     * always give the same derived id; different names give different ids.
     *
     * @param name what the derived key is for, such as {@code "provider"}
     * @return a key in the same scope whose id is a hex SHA-256 digest of scope, id and name
     */
    public IdempotencyKey derive(String name) {
        Objects.requireNonNull(name, "name");
        String digest = Fingerprint.ofParts("derive", scope, id, name).hex();
        return new IdempotencyKey(scope, digest);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof IdempotencyKey other && scope.equals(other.scope) && id.equals(other.id);
    }

    @Override
    public int hashCode() {
        return 31 * scope.hashCode() + id.hashCode();
    }

    /** @return {@code scope/id}, for logs and messages (key ids are not secrets) */
    @Override
    public String toString() {
        return scope + "/" + id;
    }
}
