package dev.idempotency;

/**
 * A {@link ResultCodec} failed to encode or decode a result, or no codec fits the result's type.
 * When encoding fails nothing has been recorded: roll back the transaction.
 */
public class ResultCodecException extends IdempotencyException {

    private static final long serialVersionUID = 1L;

    /**
     * @param key the key concerned
     * @param reason what failed
     * @param cause the codec's exception, or {@code null}
     */
    public ResultCodecException(IdempotencyKey key, String reason, Throwable cause) {
        super(key, reason, cause);
    }
}
