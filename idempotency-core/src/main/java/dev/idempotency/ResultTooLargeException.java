package dev.idempotency;

/**
 * The work's encoded result is larger than {@link KeyPolicy#maxResultBytes()}. Thrown before the
 * result is written, after the claim is released; roll back the transaction to undo the work's
 * writes.
 */
public class ResultTooLargeException extends IdempotencyException {

    private static final long serialVersionUID = 1L;

    private final int size;
    private final int limit;

    /**
     * @param key the key concerned
     * @param size the encoded size in bytes
     * @param limit the policy's limit in bytes
     */
    public ResultTooLargeException(IdempotencyKey key, int size, int limit) {
        super(key, "the encoded result is " + size + " bytes, over the policy's limit of " + limit
                + " bytes (KeyPolicy.maxResultBytes); the claim was released: roll back the transaction to undo the work's writes", null);
        this.size = size;
        this.limit = limit;
    }

    /** @return the encoded size in bytes */
    public int size() {
        return size;
    }

    /** @return the limit in bytes */
    public int limit() {
        return limit;
    }
}
