package dev.idempotency;

/**
 * A value the library must record (the work's result, or in lease mode the prepare phase's value)
 * is larger, encoded, than {@link KeyPolicy#maxResultBytes()}. Thrown before that value is
 * written; the message says what the library did about it, which depends on the mode:
 * <ul>
 *   <li>in the caller's transaction, the claim is released: roll the transaction back to undo the
 *       work's writes;</li>
 *   <li>in a transaction that {@link ManagedIdempotency} runs ({@code execute}, write-last, chunks),
 *       the library has rolled it back, the work's writes with it, and nothing of the key is
 *       recorded;</li>
 *   <li>in lease mode, for the prepare phase's value: the claim's transaction was rolled back with
 *       the prepare's writes, nothing of the key was recorded, and the call did not run;</li>
 *   <li>in lease mode, for the result: the call has run, so the finish phase's writes are rolled
 *       back and the operation is recorded as failed with this exception instead, which every retry
 *       gets back ({@link Outcome.Failed}) without running the call again.</li>
 * </ul>
 */
public class ResultTooLargeException extends IdempotencyException {

    private static final long serialVersionUID = 1L;

    /** What the transactional mode encodes. */
    static final String RESULT = "the encoded result";

    private final int size;
    private final int limit;

    /**
     * The work's result, in the caller's transaction (transactional mode): the claim was released.
     *
     * @param key the key concerned
     * @param size the encoded size in bytes
     * @param limit the policy's limit in bytes
     */
    public ResultTooLargeException(IdempotencyKey key, int size, int limit) {
        this(key, RESULT, size, limit, "the claim was released: roll back the transaction to undo the work's writes");
    }

    /**
     * @param key the key concerned
     * @param what what was too large, such as "the encoded result"
     * @param size the encoded size in bytes
     * @param limit the policy's limit in bytes
     * @param aftermath what the library did about it and what is left to do, true for the mode it
     *     is raised in
     */
    public ResultTooLargeException(IdempotencyKey key, String what, int size, int limit, String aftermath) {
        super(key, what + " is " + size + " bytes, over the policy's limit of " + limit + " bytes (KeyPolicy.maxResultBytes); "
                + aftermath, null);
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
