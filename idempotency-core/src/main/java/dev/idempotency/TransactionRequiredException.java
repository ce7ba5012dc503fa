package dev.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * The transaction handed to the library cannot carry the key atomically with the business change:
 * the connection is in auto-commit mode, closed, or the handle is outside a transaction. Nothing
 * was written.
 */
public class TransactionRequiredException extends IdempotencyException {

    private static final long serialVersionUID = 1L;

    /**
     * @param key the key concerned, or {@code null} where the call concerns no single key (a chunk of
     *     keys, a purge)
     * @param reason what is wrong with the transaction
     */
    public TransactionRequiredException(@Nullable IdempotencyKey key, String reason) {
        super(key, reason, null);
    }
}
