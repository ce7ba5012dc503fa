package dev.idempotency;

/**
 * A work called the library again with its own key and the same fingerprint, in its own
 * transaction, while that key's first execution was still running: the key's claim is this
 * transaction's own and not committed, so the inner call can neither replay a result nor run. (With
 * another fingerprint the inner call gets {@link Outcome.Mismatch}, as any reuse of a key for
 * another request does.) Nothing was written by the inner call;
 * the outer work's claim is released when this exception leaves it, as for any exception of the
 * work. Run one operation once per key: call the inner code directly, or give it a key of its
 * own ({@link IdempotencyKey#derive(String)}).
 */
public class NestedKeyException extends IdempotencyException {

    private static final long serialVersionUID = 1L;

    /** @param key the key concerned */
    public NestedKeyException(IdempotencyKey key) {
        super(key, "execute was called again with its own key inside its own work, in the same transaction, while its first"
                + " execution still runs: its claim is this transaction's own, not committed, and the inner call did not run."
                + " Call the inner code directly, or give it a key of its own (IdempotencyKey.derive)", null);
    }
}
