package dev.idempotency.jdbc;

import dev.idempotency.IdempotencyException;
import java.sql.SQLException;
import java.sql.SQLTransactionRollbackException;

/**
 * Recognises failures after which the whole transaction may simply be retried: serialization
 * failures and deadlocks (SQLState class 40, such as PostgreSQL's 40001 and 40P01, or MariaDB
 * Galera's certification failure, 40001 with error 1213 on COMMIT), SQLite's busy errors (its
 * driver gives no SQLState; the message starts with {@code [SQLITE_BUSY}), and the library's own
 * retryable exceptions. Some of these appear only at the caller's {@code COMMIT}, after {@code execute}
 * returned {@code Executed}: the database then rolls the transaction back whole, and the retry
 * replays the winner's result.
 *
 * <p>Stateless and thread-safe.
 */
public final class RetryableFailures {

    private RetryableFailures() {
    }

    /**
     * @param failure anything thrown by a transaction, its commit included
     * @return whether it, or any of its causes, says that retrying the whole transaction may succeed
     */
    public static boolean isRetryable(Throwable failure) {
        java.util.Set<Throwable> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
            if (t instanceof IdempotencyException e && e.isRetryable()) {
                return true;
            }
            if (t instanceof SQLTransactionRollbackException) {
                return true;
            }
            if (t instanceof SQLException e && e.getSQLState() != null && e.getSQLState().startsWith("40")) {
                return true;
            }
            if (t instanceof SQLException e && e.getMessage() != null && e.getMessage().startsWith("[SQLITE_BUSY")) {
                return true;
            }
            if (t instanceof SQLException e && e.getErrorCode() == 1020 && "HY000".equals(e.getSQLState())) {
                return true; // MariaDB: "Record has changed since last read" (innodb_snapshot_isolation)
            }
        }
        return false;
    }
}
