package dev.idempotency.jdbc.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.function.Predicate;

/**
 * The savepoints around the statements of a claim, written once for every dialect: where one failed
 * statement aborts the whole transaction (PostgreSQL), a statement that may meet a duplicate or a
 * lock wait that runs out runs under a savepoint, and the transaction is rolled back to it, so that
 * the caller's transaction stays usable.
 *
 * <p>Part of the executor ({@link JdbcExecutor}). Stateless and thread-safe.
 */
final class Savepoints {

    private Savepoints() {
    }

    /**
     * Runs a step under a savepoint, if asked; if the step fails, rolls back to the savepoint and
     * throws the failure. The savepoint is released either way.
     *
     * @param c the connection, in a transaction
     * @param use whether to set a savepoint (else the step runs as it is)
     * @param step the step
     * @param <T> its result
     * @return what the step returned
     * @throws SQLException if the step fails, after the rollback to the savepoint
     */
    static <T> T undoingFailure(Connection c, boolean use, Execution<T> step) throws SQLException {
        Savepoint savepoint = use ? c.setSavepoint() : null;
        try {
            return step.run();
        } catch (SQLException e) {
            if (savepoint != null) {
                c.rollback(savepoint);
            }
            throw e;
        } finally {
            if (savepoint != null) {
                Savepoints.releaseQuietly(c, savepoint);
            }
        }
    }

    /**
     * Runs a step under a savepoint, if asked, and rolls back to it if the step's result says so;
     * the savepoint is then released. If the step fails, the failure is thrown as it is.
     *
     * @param c the connection, in a transaction
     * @param use whether to set a savepoint (else the step runs as it is)
     * @param step the step
     * @param undo whether a result's writes are undone
     * @param <T> its result
     * @return what the step returned
     * @throws SQLException if the step fails
     */
    static <T> T undoingIf(Connection c, boolean use, Execution<T> step, Predicate<? super T> undo) throws SQLException {
        Savepoint savepoint = use ? c.setSavepoint() : null;
        T result = step.run();
        if (savepoint != null) {
            if (undo.test(result)) {
                c.rollback(savepoint);
            }
            Savepoints.releaseQuietly(c, savepoint);
        }
        return result;
    }

    /** Releases a savepoint; failures are ignored (some drivers do not support it). */
    static void releaseQuietly(Connection c, Savepoint savepoint) {
        try {
            c.releaseSavepoint(savepoint);
        } catch (SQLException | UnsupportedOperationException ignored) {
            // Releasing is an optimisation; the savepoint ends with the transaction anyway.
        }
    }
}
