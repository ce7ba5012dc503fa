package dev.idempotency.jdbc;

import dev.idempotency.IdempotencyException;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.MissingTableException;
import dev.idempotency.jdbc.dialect.TableName;
import dev.idempotency.jdbc.internal.Failures;
import dev.idempotency.jdbc.internal.JdbcExecutor;
import java.sql.Connection;
import java.sql.SQLException;
import org.jspecify.annotations.Nullable;

/** The failures of {@link JdbcIdempotencyStore}, from the database's errors as its dialect classifies them. */
final class StoreFailures {

    private StoreFailures() {
    }

    /**
     * The store's failure for a database's error, as the dialect classifies it.
     *
     * @param table the store's table
     * @param d the executor, whose dialect classifies the error
     * @param tx the caller's connection, or {@code null} for a lease primitive, which always runs in
     *     a transaction of the library's own
     * @param key the key, or {@code null}
     * @param what what failed
     * @param e the error
     * @return the failure to throw
     */
    static IdempotencyException of(TableName table, JdbcExecutor d, @Nullable Connection tx, @Nullable IdempotencyKey key, String what,
            SQLException e) {
        return Failures.of(table, d.dialect(), tx == null || OwnedTransaction.of(tx) != null,
                ", or call JdbcIdempotencyStore.createTableIfMissing once at startup.", key, what, JdbcExecutor.error(e), e);
    }

    /** As {@link #of}, for the table of named operations, which a store created before it lacks. */
    static IdempotencyException ofPending(TableName table, JdbcExecutor d, Connection tx, @Nullable IdempotencyKey key, String what,
            SQLException e) {
        if (d.isMissingTable(e)) {
            return new MissingTableException(key, table.pending().qualified(), "Named operations (Phases.named) and the recovery"
                    + " worker need it: create it with the DDL in classpath resource '" + d.dialect().ddlResource() + "' (its last"
                    + " statement), or call JdbcIdempotencyStore.createTableIfMissing once at startup.", e);
        }
        return of(table, d, tx, key, what, e);
    }
}
