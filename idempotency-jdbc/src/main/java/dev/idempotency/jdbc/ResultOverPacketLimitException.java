package dev.idempotency.jdbc;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.ResultTooLargeException;

/**
 * The encoded result (or, in lease mode, the recovery point: the prepare phase's value) is within the
 * policy's limit ({@link dev.idempotency.KeyPolicy#maxResultBytes()}), but the statement that would
 * record it is larger than the database server accepts (MariaDB's and MySQL's
 * {@code max_allowed_packet}), which would fail and drop the connection. Thrown before anything is
 * sent; the connection stays usable; the message names which of the two was too large. In the
 * caller's transaction the claim is released: roll back the transaction to undo the work's writes.
 * In lease mode the engine records the operation as failed, as for a result over the policy's
 * limit; for a recovery point, the claim's transaction rolls back, nothing of the key is recorded
 * and the call does not run. Either way, raise the server's limit, or lower the policy's below it.
 */
public class ResultOverPacketLimitException extends ResultTooLargeException {

    private static final long serialVersionUID = 1L;

    /** What the completions record. */
    static final String RESULT = "the encoded result";
    /** What lease mode's checkpoint records. */
    static final String RECOVERY_POINT = "the recovery point (the prepare phase's value)";

    /** What the transactional modes say: the claim is released with the caller's transaction. */
    static final String RELEASED = "nothing was sent and the claim was released: roll back the transaction to undo the work's"
            + " writes";
    /** What lease mode says; the engine adds what it did. */
    static final String NOTHING_SENT = "nothing was sent";

    private final long statementBytes;
    private final long packetLimit;
    private final String setting;

    /**
     * In the caller's transaction: the claim was released.
     *
     * @param key the key concerned
     * @param size the encoded result's size in bytes
     * @param statementBytes the size of the statement that would record it, at most
     * @param packetLimit the largest statement the server accepts, in bytes, which is also {@link #limit()}
     * @param setting the server setting that sets that limit
     */
    public ResultOverPacketLimitException(IdempotencyKey key, int size, long statementBytes, long packetLimit, String setting) {
        this(key, size, statementBytes, packetLimit, setting, RELEASED);
    }

    /**
     * @param key the key concerned
     * @param size the encoded result's size in bytes
     * @param statementBytes the size of the statement that would record it, at most
     * @param packetLimit the largest statement the server accepts, in bytes, which is also {@link #limit()}
     * @param setting the server setting that sets that limit
     * @param aftermath what was done about it, true for the mode it is raised in
     */
    public ResultOverPacketLimitException(IdempotencyKey key, int size, long statementBytes, long packetLimit, String setting,
            String aftermath) {
        this(key, RESULT, size, statementBytes, packetLimit, setting, aftermath);
    }

    /**
     * @param key the key concerned
     * @param what what was too large: {@code "the encoded result"}, or lease mode's
     *     {@code "the recovery point (the prepare phase's value)"}
     * @param size its encoded size in bytes
     * @param statementBytes the size of the statement that would record it, at most
     * @param packetLimit the largest statement the server accepts, in bytes, which is also {@link #limit()}
     * @param setting the server setting that sets that limit
     * @param aftermath what was done about it, true for the mode it is raised in
     */
    public ResultOverPacketLimitException(IdempotencyKey key, String what, int size, long statementBytes, long packetLimit,
            String setting, String aftermath) {
        super(key, what + " is " + size + " bytes, within the policy's limit, but the statement that records it would"
                + " be up to " + statementBytes + " bytes, over the server's " + setting + " of " + packetLimit + " bytes, which would"
                + " fail and drop the connection", aftermath + ", then raise " + setting + " on the server or lower"
                + " KeyPolicy.maxResultBytes below it", size, (int) Math.min(Integer.MAX_VALUE, packetLimit), null);
        this.statementBytes = statementBytes;
        this.packetLimit = packetLimit;
        this.setting = setting;
    }

    /** @return the size of the statement that would have recorded the result, at most */
    public long statementBytes() {
        return statementBytes;
    }

    /** @return the largest statement the server accepts, in bytes */
    public long packetLimit() {
        return packetLimit;
    }

    /** @return the server setting that sets the limit, such as {@code max_allowed_packet} */
    public String setting() {
        return setting;
    }
}
