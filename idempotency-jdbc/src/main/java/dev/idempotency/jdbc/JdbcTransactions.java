package dev.idempotency.jdbc;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.TransactionConflictException;
import dev.idempotency.TxWork;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.LastWriteRefusedException;
import dev.idempotency.spi.TransactionRunner;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * Transactions that the library runs itself on connections from a {@link DataSource}: take a
 * connection, switch auto-commit off, run the work, commit, and close the connection (a pool
 * restores its auto-commit). If the work or the commit throws, the transaction is rolled back; the
 * work's exception reaches the caller unchanged, a failed commit as
 * {@link IdempotencyStoreException} (a {@link TransactionConflictException} for a
 * conflict the database resolved by aborting the transaction, such as a serialization failure or a
 * MariaDB Galera certification failure at {@code COMMIT}).
 *
 * <p>Where the dialect allows it ({@link dev.idempotency.jdbc.dialect.SqlDialect#completesWithCommit()}:
 * PostgreSQL), the result that {@link JdbcIdempotencyStore} records in such a transaction is sent
 * together with the {@code COMMIT}, in one round trip; if its record were not found, the statement
 * fails before the {@code COMMIT} runs, and the transaction is rolled back. So is the record of a
 * write-last transaction ({@link dev.idempotency.ManagedIdempotency#writeLast}), where the
 * dialect allows it ({@link dev.idempotency.jdbc.dialect.SqlDialect#writesLastWithCommit()}): if the
 * key has a record, the commit rolls back and throws
 * {@link LastWriteRefusedException}, which the engine answers from.
 *
 * <p>The work is given the data source's connection in a wrapper that carries the transaction to
 * {@link JdbcIdempotencyStore} (what the commit must send, if anything); every call reaches the
 * connection, {@code unwrap} and {@code isWrapperFor} included, and the wrapper equals only itself.
 *
 * <p>The isolation level is the data source's own. Immutable and thread-safe.
 */
public final class JdbcTransactions implements TransactionRunner<Connection> {

    private final DataSource dataSource;

    private JdbcTransactions(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /**
     * @param dataSource where connections come from (a pool, typically)
     * @return transactions on its connections
     */
    public static JdbcTransactions of(DataSource dataSource) {
        return new JdbcTransactions(Objects.requireNonNull(dataSource, "dataSource"));
    }

    /** @return the data source */
    public DataSource dataSource() {
        return dataSource;
    }

    @Override
    public <T, X extends Exception> T inTransaction(TxWork<Connection, T, X> work) throws X {
        Objects.requireNonNull(work, "work");
        Connection c = begin();
        OwnedTransaction transaction = OwnedTransaction.begin(c);
        try {
            T result;
            try {
                result = work.apply(transaction.connection());
            } catch (Throwable failure) {
                rollback(c, failure);
                throw failure;
            }
            commit(c, transaction);
            return result;
        } finally {
            transaction.end();
            close(c);
        }
    }

    /**
     * Recognises conflicts as {@link RetryableFailures#isRetryable} does: SQLState class 40,
     * MariaDB's 1020, SQLite's busy errors, and the library's retryable exceptions.
     */
    @Override
    public boolean isRetryable(Throwable failure) {
        return RetryableFailures.isRetryable(failure);
    }

    private Connection begin() {
        Connection c;
        try {
            c = dataSource.getConnection();
        } catch (SQLException e) {
            throw new IdempotencyStoreException(null, "could not get a connection from the data source", e);
        }
        try {
            if (c.getAutoCommit()) {
                c.setAutoCommit(false);
            }
            return c;
        } catch (SQLException e) {
            IdempotencyStoreException failure = new IdempotencyStoreException(null, "could not begin a transaction", e);
            close(c);
            throw failure;
        }
    }

    private static void commit(Connection c, OwnedTransaction owned) {
        owned.end();
        if (owned.writeLast() != null) {
            commitWritingLast(c, owned);
            return;
        }
        if (owned.hasPending()) {
            commitWithCompletion(c, owned);
            return;
        }
        try {
            c.commit();
        } catch (SQLException e) {
            throw rolledBack(c, commitFailed(null, "the commit", e));
        }
    }

    /**
     * @return the failure of a commit (or of the write sent with it): a conflict to retry if the
     *     database reports one, else a store failure saying that {@code what} failed
     */
    private static IdempotencyStoreException commitFailed(@Nullable IdempotencyKey key, String what, SQLException e) {
        return RetryableFailures.isRetryable(e) ? new TransactionConflictException(key, e)
                : new IdempotencyStoreException(key, what + " failed; nothing of the transaction was kept", e);
    }

    /** Rolls the failed transaction back, keeping a failed rollback as suppressed, and returns {@code failure} to throw. */
    private static <E extends RuntimeException> E rolledBack(Connection c, E failure) {
        rollback(c, failure);
        return failure;
    }

    /** Sends the completion the store left and the {@code COMMIT} in one round trip. */
    private static void commitWithCompletion(Connection c, OwnedTransaction owned) {
        Completion done = owned.completion();
        try {
            owned.dialect().completeAndCommit(c, owned.table(), done);
        } catch (SQLException e) {
            throw rolledBack(c, owned.dialect().isRecordMissing(e)
                    ? new IdempotencyStoreException(done.key(), "the claimed record was not found when recording the result in table '"
                            + owned.table() + "' (was it deleted concurrently?); nothing of the transaction was kept", e)
                    : commitFailed(done.key(), "recording the result and committing", e));
        }
    }

    /**
     * Sends the write-last record the store left and the {@code COMMIT} in one round trip; a refusal
     * (the key has a record, or is held past the lock timeout) rolls back and throws
     * {@link LastWriteRefusedException} with what was found.
     */
    private static void commitWritingLast(Connection c, OwnedTransaction owned) {
        Completion done = owned.completion();
        Claim claim;
        try {
            claim = owned.dialect().writeLastAndCommit(c, owned.table(), owned.writeLast(), done);
        } catch (SQLException e) {
            throw rolledBack(c, commitFailed(done.key(), "writing the key's record and committing", e));
        }
        if (!(claim instanceof Claim.Acquired)) {
            throw rolledBack(c, new LastWriteRefusedException(done.key(), claim, null));
        }
    }

    /** Gives the connection back; a pool restores its auto-commit. A failure to close is logged by the pool, not thrown. */
    private static void close(Connection c) {
        try {
            c.close();
        } catch (SQLException ignored) {
            // The transaction is already committed or rolled back; nothing the caller can act on.
        }
    }

    private static void rollback(Connection c, Throwable failure) {
        try {
            c.rollback();
        } catch (SQLException | RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    @Override
    public String toString() {
        return "JdbcTransactions[" + dataSource + "]";
    }
}
