package dev.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * Thrown by {@link Outcome#value()} on {@link Outcome.Failed}: the work failed with an exception
 * that the policy declares final, and that failure was recorded for every retry.
 */
public class RecordedFailureException extends IdempotencyException {

    private static final long serialVersionUID = 1L;

    private final String errorType;
    private final @Nullable String errorMessage;

    /**
     * @param key the key concerned
     * @param errorType the class name of the recorded exception
     * @param errorMessage its message, or {@code null}
     */
    public RecordedFailureException(IdempotencyKey key, String errorType, @Nullable String errorMessage) {
        super(key, "the work failed finally with " + errorType + (errorMessage == null ? "" : ": " + errorMessage), null);
        this.errorType = errorType;
        this.errorMessage = errorMessage;
    }

    /** @return the class name of the recorded exception */
    public String errorType() {
        return errorType;
    }

    /** @return the recorded exception's message, or {@code null} */
    public @Nullable String errorMessage() {
        return errorMessage;
    }
}
