package dev.idempotency;

/**
 * Thrown by {@link Outcome#value()} on {@link Outcome.Mismatch}: the key was used before with a
 * different request fingerprint.
 */
public class KeyMismatchException extends IdempotencyException {

    private static final long serialVersionUID = 1L;

    /** @param key the key concerned */
    public KeyMismatchException(IdempotencyKey key) {
        super(key, "the key was already used with a different request (fingerprint mismatch)", null);
    }
}
