package dev.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * The root of every exception the library throws. Each one carries the key it concerns (scope and
 * id, as fields and in the message) where a key is known.
 *
 * <p>The library throws for misuse (an invalid key, a connection in auto-commit mode), for
 * infrastructure failure (the database), and from {@link Outcome#value()} when an outcome holds
 * no value. Expected results (a replay, a key in progress, a mismatch) are {@link Outcome} values,
 * never exceptions. Exceptions thrown by the caller's own work are never wrapped.
 */
public abstract class IdempotencyException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final @Nullable String scope;
    private final @Nullable String keyId;

    /**
     * @param scope the key's scope, or {@code null} if unknown
     * @param keyId the key's id, or {@code null} if unknown
     * @param reason what went wrong
     * @param cause the underlying failure, or {@code null}
     */
    protected IdempotencyException(@Nullable String scope, @Nullable String keyId, String reason, @Nullable Throwable cause) {
        super(format(scope, keyId, reason), cause);
        this.scope = scope;
        this.keyId = keyId;
    }

    /**
     * @param key the key concerned, or {@code null}
     * @param reason what went wrong
     * @param cause the underlying failure, or {@code null}
     */
    protected IdempotencyException(@Nullable IdempotencyKey key, String reason, @Nullable Throwable cause) {
        this(key == null ? null : key.scope(), key == null ? null : key.id(), reason, cause);
    }

    /** @return the scope of the key concerned, or {@code null} if no key is known */
    public @Nullable String scope() {
        return scope;
    }

    /** @return the id of the key concerned, or {@code null} if no key is known */
    public @Nullable String keyId() {
        return keyId;
    }

    /**
     * Whether retrying the whole transaction may succeed. {@code true} for transient conflicts
     * (a serialization failure, a deadlock, a key still in progress); {@code false} for misuse.
     *
     * @return whether a retry of the caller's transaction is worthwhile
     */
    public boolean isRetryable() {
        return false;
    }

    private static String format(@Nullable String scope, @Nullable String keyId, String reason) {
        if (scope == null && keyId == null) {
            return reason;
        }
        return "Idempotency key (scope '" + printable(scope) + "', id '" + printable(keyId) + "'): " + reason;
    }

    /** Makes control characters visible, so that a message never carries raw ones into a log. */
    static String printable(@Nullable String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder b = new StringBuilder(Math.min(s.length(), 300));
        int i = 0;
        for (; i < s.length() && b.length() < 300; i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0)) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        if (i < s.length()) {
            b.append("...");
        }
        return b.toString();
    }
}
