package dev.idempotency.jdbc.internal;

import dev.idempotency.IdempotencyException;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.MissingTableException;
import dev.idempotency.TransactionConflictException;
import dev.idempotency.TransactionRequiredException;
import dev.idempotency.jdbc.dialect.SqlDialect;
import dev.idempotency.jdbc.dialect.SqlError;
import dev.idempotency.jdbc.dialect.TableName;
import org.jspecify.annotations.Nullable;

/**
 * The failure a store throws for a database's error, as the dialect classifies it, written once for
 * every executor (JDBC's, R2DBC's): a read-only transaction, a missing table, a conflict the caller
 * retries, or any other store failure. Stateless and thread-safe.
 */
public final class Failures {

    private Failures() {
    }

    /**
     * @param table the store's table
     * @param key the key
     * @param rows the rows the completing statement updated, not 1
     * @return the failure of a completion whose claimed record is gone
     */
    public static IdempotencyStoreException recordMissing(TableName table, IdempotencyKey key, long rows) {
        return new IdempotencyStoreException(key, "the claimed record was not found when recording the result ("
                + rows + " rows updated in table '" + table + "'); was it deleted concurrently?", null);
    }

    /**
     * @param table the store's table
     * @param dialect classifies the error
     * @param libraryRuns whether the library runs the transaction (else it is the caller's), for what
     *     the message advises
     * @param createTable how to create a missing table, as a sentence
     * @param key the key, or {@code null}
     * @param what what failed, after "could not"
     * @param error the error, as the dialect reads it
     * @param cause the driver's exception
     * @return the failure to throw
     */
    public static IdempotencyException of(TableName table, SqlDialect dialect, boolean libraryRuns, String createTable,
            @Nullable IdempotencyKey key, String what, SqlError error, Exception cause) {
        if (dialect.isReadOnly(error)) {
            TransactionRequiredException readOnly = new TransactionRequiredException(key, "the transaction is read-only (a"
                    + " read-only transaction, a database opened read-only, or a standby server), so the library could not "
                    + what + " in table '" + table + "' (" + dialect.name() + "; SQLState " + error.sqlState() + "). Nothing was written"
                    + (libraryRuns ? ", and the library rolled back the transaction it ran: give it a data source on a read-write primary"
                            : ": roll back, and use a read-write transaction on the primary"));
            readOnly.addSuppressed(cause); // the exception takes no cause; the database's error stays attached
            return readOnly;
        }
        if (dialect.isMissingTable(error)) {
            return new MissingTableException(key, table.qualified(), "Create it with the DDL in classpath resource '"
                    + dialect.ddlResource() + "' (for Flyway or Liquibase)" + createTable, cause);
        }
        if (dialect.isTransactionConflict(error)) {
            return new TransactionConflictException(key, cause);
        }
        return new IdempotencyStoreException(key, "could not " + what + " in table '" + table + "' (" + dialect.name()
                + "; SQLState " + error.sqlState() + ")", cause);
    }
}
