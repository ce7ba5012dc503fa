package dev.idempotency;

/**
 * Thrown by {@link Outcome#value()} on {@link Outcome.InProgress}: another attempt holds the key.
 */
public class KeyInProgressException extends IdempotencyException {

    private static final long serialVersionUID = 1L;

    /** @param key the key concerned */
    public KeyInProgressException(IdempotencyKey key) {
        super(key, "another attempt holds this key; retry later", null);
    }

    /** @return {@code true}: a later retry gets the other attempt's result */
    @Override
    public boolean isRetryable() {
        return true;
    }
}
