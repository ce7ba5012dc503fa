package dev.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * A {@link ResultCodec} failed to encode or decode a result, or no codec fits the result's type.
 * When encoding fails nothing is recorded, and the message says what the library did, true for the
 * mode: in the caller's transaction the claim is released (roll the transaction back to undo the
 * work's writes); in a transaction that {@link ManagedIdempotency} runs, the library has rolled it
 * back, the work's writes with it.
 */
public class ResultCodecException extends IdempotencyException {

    private static final long serialVersionUID = 1L;

    /**
     * @param key the key concerned
     * @param reason what failed
     * @param cause the codec's exception, or {@code null}
     */
    public ResultCodecException(IdempotencyKey key, String reason, @Nullable Throwable cause) {
        super(key, reason, cause);
    }
}
