package dev.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * The store failed: the database is down, the connection was lost, a statement failed. The cause
 * (for JDBC stores, the {@link java.sql.SQLException}) is kept. No outcome was invented: the
 * caller rolls back, and a retry after recovery is still exactly-once.
 */
public class IdempotencyStoreException extends IdempotencyException {

    private static final long serialVersionUID = 1L;

    /**
     * @param key the key concerned, or {@code null}
     * @param reason what failed
     * @param cause the underlying failure
     */
    public IdempotencyStoreException(@Nullable IdempotencyKey key, String reason, @Nullable Throwable cause) {
        super(key, reason, cause);
    }
}
