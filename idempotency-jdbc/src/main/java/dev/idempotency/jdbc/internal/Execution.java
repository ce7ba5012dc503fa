package dev.idempotency.jdbc.internal;

import java.sql.SQLException;

/**
 * A step of the executor that runs statements, such as a statement execution that may wait for a lock.
 *
 * @param <T> its result
 */
@FunctionalInterface
public interface Execution<T> {
    /**
     * @return the result
     * @throws SQLException if it fails
     */
    T run() throws SQLException;
}
