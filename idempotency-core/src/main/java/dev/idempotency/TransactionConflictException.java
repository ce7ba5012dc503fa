package dev.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * The database aborted the caller's transaction to resolve a conflict with a concurrent one (a
 * serialization failure or a deadlock, SQLState class 40), typically between two attempts with the
 * same key. Roll back and retry the whole transaction: the retry replays the winner's result.
 */
public class TransactionConflictException extends IdempotencyStoreException {

    private static final long serialVersionUID = 1L;

    /**
     * @param key the key concerned, or {@code null} if none is known
     * @param cause the database's report of the conflict
     */
    public TransactionConflictException(@Nullable IdempotencyKey key, Throwable cause) {
        super(key, "the database aborted the transaction to resolve a conflict with a concurrent one;"
                + " roll back and retry the whole transaction", cause);
    }

    /** @return {@code true}: a retry of the whole transaction replays the winner's result */
    @Override
    public boolean isRetryable() {
        return true;
    }
}
