package dev.idempotency.jakarta.transaction;

import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.TransactionConflictException;
import dev.idempotency.TxWork;
import dev.idempotency.jdbc.RetryableFailures;
import dev.idempotency.spi.TransactionRunner;
import jakarta.transaction.HeuristicMixedException;
import jakarta.transaction.Status;
import jakarta.transaction.SystemException;
import jakarta.transaction.Transaction;
import jakarta.transaction.TransactionManager;
import jakarta.transaction.UserTransaction;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * Transactions that the library runs itself ({@link ManagedIdempotency}: transactional mode with
 * retries on a conflict, lease mode, chunks, batch jobs, and the HTTP layer's {@code handle}) as
 * Jakarta Transactions (JTA) transactions: begin, take a connection of the {@code DataSource} (which
 * the transaction manager enlists), run the work, close the connection's handle, commit. Code that
 * the work calls and that takes its own connections of the same data source (a servlet, a DAO)
 * joins the same transaction, as it would in a {@code @Transactional} method.
 *
 * <p>Built on a {@link TransactionManager}, each transaction is a new one: a transaction the calling
 * thread is in is suspended meanwhile and resumed afterwards (lease mode's claim and results must be
 * committed at once, not when an enclosing transaction ends). Built on a {@link UserTransaction},
 * which cannot suspend, a call from inside a transaction is refused with an
 * {@link IllegalStateException}.
 *
 * <p>The work's exceptions, checked ones included, roll the transaction back and reach the caller
 * unchanged. A commit that fails reaches the caller as a {@link TransactionConflictException} when
 * the database reports a conflict anywhere in its cause chain (see {@link #isRetryable}), which
 * {@link ManagedIdempotency} retries, and as an {@link IdempotencyStoreException} otherwise, with
 * the transaction manager's exception as the cause.
 *
 * <p>Immutable and thread-safe: the transaction is the calling thread's, as JTA associates it.
 */
public final class JtaTransactions implements TransactionRunner<Connection> {

    private final @Nullable TransactionManager transactionManager;
    private final @Nullable UserTransaction userTransaction;
    private final DataSource dataSource;

    private JtaTransactions(@Nullable TransactionManager transactionManager, @Nullable UserTransaction userTransaction,
                            DataSource dataSource) {
        this.transactionManager = transactionManager;
        this.userTransaction = userTransaction;
        this.dataSource = dataSource;
    }

    /**
     * @param transactionManager the transaction manager (an application server's, Narayana's
     *     {@code com.arjuna.ats.jta.TransactionManager.transactionManager()}, ...)
     * @param dataSource a data source that the transaction manager manages
     * @return transactions of the manager's own timeout and the data source's isolation level
     */
    public static JtaTransactions of(TransactionManager transactionManager, DataSource dataSource) {
        return new JtaTransactions(Objects.requireNonNull(transactionManager, "transactionManager"), null,
                Objects.requireNonNull(dataSource, "dataSource"));
    }

    /**
     * @param userTransaction the application's {@code UserTransaction} ({@code java:comp/UserTransaction})
     * @param dataSource a data source that the transaction manager manages
     * @return transactions of the manager's own timeout and the data source's isolation level, which
     *     refuse to begin inside a transaction (a {@code UserTransaction} cannot suspend one)
     */
    public static JtaTransactions of(UserTransaction userTransaction, DataSource dataSource) {
        return new JtaTransactions(null, Objects.requireNonNull(userTransaction, "userTransaction"),
                Objects.requireNonNull(dataSource, "dataSource"));
    }

    /** @return the data source whose connections the work receives */
    public DataSource dataSource() {
        return dataSource;
    }

    @Override
    public <T, X extends Exception> T inTransaction(TxWork<Connection, T, X> work) throws X {
        Objects.requireNonNull(work, "work");
        Transaction suspended = suspendEnclosing();
        try {
            begin0();
            T result;
            try {
                result = runOnConnection(work);
            } catch (Throwable failure) {
                rollback(failure);
                throw failure;
            }
            commit();
            return result;
        } finally {
            resume(suspended);
        }
    }

    /**
     * Begins a JTA transaction on the calling thread that the caller ends later, for work it cannot
     * wrap in {@link #inTransaction} (the Jakarta REST filters, which claim a key before the
     * resource method and record its response after it): code that runs on this thread meanwhile
     * (a resource method, {@code @Transactional} with {@code REQUIRED} or {@code MANDATORY}) joins
     * it. A transaction the thread is in is suspended, as {@code inTransaction} does, and resumed
     * when the span ends.
     *
     * @return the open transaction, to be committed or rolled back on this same thread
     * @throws IllegalStateException if built on a {@link UserTransaction} and a transaction is on this thread
     * @throws IdempotencyStoreException if the transaction manager cannot begin one
     */
    public Span begin() {
        Transaction suspended = suspendEnclosing();
        try {
            begin0();
        } catch (RuntimeException e) {
            try {
                resume(suspended);
            } catch (RuntimeException resuming) {
                e.addSuppressed(resuming);
            }
            throw e;
        }
        return new Span(suspended, Thread.currentThread());
    }

    /**
     * A JTA transaction that {@link #begin()} opened on a thread, ended by {@link #commit()} or
     * {@link #rollback()} on that thread. Not thread-safe: it belongs to its thread, as JTA
     * associates it.
     */
    public final class Span {
        private final @Nullable Transaction suspended;
        private final Thread thread;
        private boolean ended;

        private Span(@Nullable Transaction suspended, Thread thread) {
            this.suspended = suspended;
            this.thread = thread;
        }

        /**
         * @return a connection of the data source, enlisted in this transaction; close it when done
         *     (the transaction keeps the connection until it ends)
         * @throws IdempotencyStoreException if the data source fails
         */
        public Connection connection() {
            requireOwnThread("connection");
            try {
                return dataSource.getConnection();
            } catch (SQLException e) {
                throw new IdempotencyStoreException(null, "could not get a connection of the JTA transaction from the data source", e);
            }
        }

        /** @return whether the transaction can no longer commit: marked for rollback (or already ended) */
        public boolean rollbackOnly() {
            requireOwnThread("rollbackOnly");
            try {
                return ended || status() != Status.STATUS_ACTIVE;
            } catch (SystemException e) {
                throw new IdempotencyStoreException(null, "could not read the status of the JTA transaction", e);
            }
        }

        /** @return whether {@link #commit()} or {@link #rollback()} ended it */
        public boolean ended() {
            return ended;
        }

        /**
         * Commits, then resumes the transaction that {@code begin} suspended.
         *
         * @throws TransactionConflictException if the database reports a conflict: nothing was kept
         * @throws IdempotencyStoreException if the commit fails otherwise
         * @throws IllegalStateException if called on another thread than {@code begin}'s, or the span has ended
         */
        public void commit() {
            end("commit");
            try {
                JtaTransactions.this.commit();
            } finally {
                resume(suspended);
            }
        }

        /**
         * Rolls back, then resumes the transaction that {@code begin} suspended; a failure to roll
         * back is logged by the transaction manager, whose timeout ends the transaction then.
         *
         * @throws IllegalStateException if called on another thread than {@code begin}'s, or the span has ended
         */
        public void rollback() {
            end("rollback");
            IllegalStateException failures = new IllegalStateException("rollback");
            try {
                JtaTransactions.this.rollback(failures);
            } finally {
                resume(suspended);
            }
            if (failures.getSuppressed().length > 0) {
                throw new IdempotencyStoreException(null, "the JTA rollback failed", failures.getSuppressed()[0]);
            }
        }

        private void end(String what) {
            requireOwnThread(what);
            if (ended) {
                throw new IllegalStateException("the transaction that JtaTransactions.begin() opened has ended already; " + what
                        + " cannot end it again");
            }
            ended = true;
        }

        private void requireOwnThread(String what) {
            if (Thread.currentThread() != thread) {
                throw new IllegalStateException(what + " on thread " + Thread.currentThread().getName() + ", but the JTA transaction"
                        + " belongs to thread " + thread.getName() + ", which began it: JTA associates a transaction with one thread");
            }
        }

        @Override
        public String toString() {
            return "JtaTransactions.Span[" + (ended ? "ended" : "open") + " on " + thread.getName() + "]";
        }
    }

    private int status() throws SystemException {
        return transactionManager != null ? transactionManager.getStatus() : Objects.requireNonNull(userTransaction).getStatus();
    }

    private <T, X extends Exception> T runOnConnection(TxWork<Connection, T, X> work) throws X {
        Connection connection;
        try {
            connection = dataSource.getConnection();
        } catch (SQLException e) {
            throw new IdempotencyStoreException(null, "could not get a connection of the JTA transaction from the data source", e);
        }
        try {
            return work.apply(connection);
        } finally {
            JtaIdempotency.close(connection);
        }
    }

    /**
     * Recognises conflicts as {@link RetryableFailures#isRetryable} does (SQLState class 40,
     * MariaDB's 1020, SQLite's busy errors, the library's retryable exceptions), anywhere in the
     * cause chain of the transaction manager's exception.
     */
    @Override
    public boolean isRetryable(Throwable failure) {
        return RetryableFailures.isRetryable(failure);
    }

    private @Nullable Transaction suspendEnclosing() {
        try {
            if (transactionManager != null) {
                return transactionManager.getStatus() == Status.STATUS_NO_TRANSACTION ? null : transactionManager.suspend();
            }
            int status = Objects.requireNonNull(userTransaction).getStatus();
            if (status != Status.STATUS_NO_TRANSACTION) {
                throw new IllegalStateException("a JTA transaction (" + JtaStatus.name(status) + ") is already on this thread, and"
                        + " a UserTransaction cannot suspend it to run the library's own; build JtaTransactions on the"
                        + " TransactionManager instead, or call from outside the transaction");
            }
            return null;
        } catch (SystemException e) {
            throw new IdempotencyStoreException(null, "could not suspend the enclosing JTA transaction", e);
        }
    }

    private void resume(@Nullable Transaction suspended) {
        if (suspended == null) {
            return;
        }
        try {
            Objects.requireNonNull(transactionManager).resume(suspended);
        } catch (Exception e) {
            throw new IdempotencyStoreException(null, "could not resume the enclosing JTA transaction after the library's own", e);
        }
    }

    private void begin0() {
        try {
            if (transactionManager != null) {
                transactionManager.begin();
            } else {
                Objects.requireNonNull(userTransaction).begin();
            }
        } catch (Exception e) {
            throw new IdempotencyStoreException(null, "could not begin a JTA transaction", e);
        }
    }

    private void commit() {
        try {
            if (transactionManager != null) {
                transactionManager.commit();
            } else {
                Objects.requireNonNull(userTransaction).commit();
            }
        } catch (HeuristicMixedException e) {
            throw new IdempotencyStoreException(null, "the JTA commit ended in a heuristic mix: part of the transaction may"
                    + " have been kept", e);
        } catch (Exception e) {
            throw isRetryable(e) ? new TransactionConflictException(null, e)
                    : new IdempotencyStoreException(null, "the JTA commit failed; nothing of the transaction was kept", e);
        }
    }

    private void rollback(Throwable failure) {
        try {
            if (transactionManager != null) {
                transactionManager.rollback();
            } else {
                Objects.requireNonNull(userTransaction).rollback();
            }
        } catch (Exception | Error e) {
            failure.addSuppressed(e);
        }
    }

    @Override
    public String toString() {
        return "JtaTransactions[" + (transactionManager != null ? transactionManager : userTransaction) + ", " + dataSource + "]";
    }
}
