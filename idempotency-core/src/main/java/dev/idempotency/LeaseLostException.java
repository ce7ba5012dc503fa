package dev.idempotency;

/**
 * An attempt in lease mode lost its claim: its lease ended and another attempt took the key over,
 * so its result (or its lease extension, or its recovery point) was refused. Nothing of this attempt
 * was recorded, and its finishing writes were rolled back; the attempt that holds the key now
 * records the outcome. A retry replays it once it completes.
 */
public class LeaseLostException extends IdempotencyException {

    private static final long serialVersionUID = 1L;

    /**
     * @param key the key concerned
     * @param what what was refused, such as "the result"
     */
    public LeaseLostException(IdempotencyKey key, String what) {
        super(key, what + " was refused: this attempt's lease ended and another attempt took the key over;"
                + " nothing of this attempt was recorded. Choose a lease longer than the call, or extend it while the call runs", null);
    }

    /** @return {@code true}: a later retry gets the outcome of the attempt that holds the key */
    @Override
    public boolean isRetryable() {
        return true;
    }
}
