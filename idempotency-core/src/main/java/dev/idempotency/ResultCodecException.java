package dev.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * A {@link ResultCodec} failed to encode or decode a result, or no codec fits the result's type.
 * When encoding fails the claim is released and nothing is recorded: roll back the transaction to
 * undo the work's writes.
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
