package dev.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * A key that the {@link KeyPolicy} refuses: null, blank, too long, or with characters outside the
 * allowed set. Thrown before any database access; nothing was read or written.
 */
public class InvalidKeyException extends IdempotencyException {

    private static final long serialVersionUID = 1L;

    /**
     * @param scope the scope as given (may be {@code null})
     * @param keyId the id as given (may be {@code null})
     * @param rule the rule that was broken
     */
    public InvalidKeyException(@Nullable String scope, @Nullable String keyId, String rule) {
        super(scope, keyId, "invalid key: " + rule, null);
    }
}
