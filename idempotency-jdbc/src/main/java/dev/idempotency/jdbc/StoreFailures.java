package dev.idempotency.jdbc;

import dev.idempotency.IdempotencyException;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.MissingTableException;
import dev.idempotency.TransactionConflictException;
import dev.idempotency.TransactionRequiredException;
import dev.idempotency.jdbc.dialect.TableName;
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
        if (d.isReadOnly(e)) {
            boolean libraryRuns = tx == null || OwnedTransaction.of(tx) != null;
            TransactionRequiredException readOnly = new TransactionRequiredException(key, "the transaction is read-only (a"
                    + " read-only transaction, a database opened read-only, or a standby server), so the library could not "
                    + what + " in table '" + table + "' (" + d.dialect().name() + "; SQLState " + e.getSQLState() + "). Nothing was written"
                    + (libraryRuns ? ", and the library rolled back the transaction it ran: give it a data source on a read-write primary"
                            : ": roll back, and use a read-write transaction on the primary"));
            readOnly.addSuppressed(e); // the exception takes no cause; the database's error stays attached
            return readOnly;
        }
        if (d.isMissingTable(e)) {
            return new MissingTableException(key, table.qualified(), "Create it with the DDL in classpath resource '" + d.dialect().ddlResource()
                    + "' (for Flyway or Liquibase), or call JdbcIdempotencyStore.createTableIfMissing once at startup.", e);
        }
        if (d.isTransactionConflict(e)) {
            return new TransactionConflictException(key, e);
        }
        return new IdempotencyStoreException(key, "could not " + what + " in table '" + table + "' (" + d.dialect().name()
                + "; SQLState " + e.getSQLState() + ")", e);
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
