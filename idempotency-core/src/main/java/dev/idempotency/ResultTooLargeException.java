package dev.idempotency;

import org.jspecify.annotations.Nullable;

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
 * A store may also refuse a result within the policy's limit that its server would not accept (a
 * statement over MariaDB's {@code max_allowed_packet}, an item over DynamoDB's 400 KB), before
 * sending anything, with this exception or a subclass of it and {@link #reason()} naming that
 * limit; the engine then does as above for the mode.
 */
public class ResultTooLargeException extends IdempotencyException {

    private static final long serialVersionUID = 1L;

    /** What the transactional mode encodes. */
    static final String RESULT = "the encoded result";

    private final int size;
    private final int limit;
    private final String reason;

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
        this(key, what + " is " + size + " bytes, over the policy's limit of " + limit + " bytes (KeyPolicy.maxResultBytes)", aftermath,
                size, limit, null);
    }

    /**
     * A limit of the store's, or any other whose reason the caller words: the message is
     * {@code reason; aftermath}.
     *
     * @param key the key concerned
     * @param reason what is too large, by how much, and whose limit it is over
     * @param aftermath what the library did about it and what is left to do, true for the mode it
     *     is raised in
     * @param size the encoded result's size in bytes
     * @param limit the limit in bytes
     * @param cause the refusal this one reports in another mode's words, or {@code null}
     */
    public ResultTooLargeException(IdempotencyKey key, String reason, String aftermath, int size, int limit, @Nullable Throwable cause) {
        super(key, reason + "; " + aftermath, cause);
        this.size = size;
        this.limit = limit;
        this.reason = reason;
    }

    /** @return the encoded size in bytes */
    public int size() {
        return size;
    }

    /** @return the limit in bytes */
    public int limit() {
        return limit;
    }

    /** @return what is too large and whose limit it is over, without what was done about it */
    public String reason() {
        return reason;
    }
}
