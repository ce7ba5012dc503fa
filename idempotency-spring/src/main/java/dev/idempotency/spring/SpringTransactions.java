package dev.idempotency.spring;

import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.TransactionConflictException;
import dev.idempotency.TxWork;
import dev.idempotency.jdbc.RetryableFailures;
import dev.idempotency.spi.TransactionRunner;
import java.sql.Connection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Objects;
import java.util.Set;
import javax.sql.DataSource;
import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Transactions that the library runs itself ({@link ManagedIdempotency}: transactional mode with
 * retries, lease mode, chunks and batch jobs), run through a Spring {@link PlatformTransactionManager}:
 * a {@code DataSourceTransactionManager}, {@code JdbcTransactionManager} or {@code JpaTransactionManager}
 * on the given {@code DataSource}. The work receives the connection Spring bound to the transaction
 * ({@link DataSourceUtils}), so that {@code JdbcTemplate} statements and JPA entities of the work
 * share it.
 *
 * <p>Each transaction is a new one ({@link TransactionDefinition#PROPAGATION_REQUIRES_NEW}), even
 * when the calling thread is inside a transaction already: lease mode's claim and results must be
 * committed at once, not when an enclosing transaction ends. (An enclosing transaction stays
 * suspended, its connection held, while the library's own runs.)
 *
 * <p>The work's exceptions, checked ones included, roll the transaction back and reach the caller
 * unchanged. A commit that fails reaches the caller as a {@link TransactionConflictException} when
 * it is a conflict (see {@link #isRetryable}), which {@link ManagedIdempotency} retries, and as an
 * {@link IdempotencyStoreException} otherwise; Spring's own exception is the cause.
 *
 * <p>Immutable and thread-safe.
 */
public final class SpringTransactions implements TransactionRunner<Connection> {

    private final TransactionTemplate template;
    private final DataSource dataSource;

    private SpringTransactions(TransactionTemplate template, DataSource dataSource) {
        this.template = template;
        this.dataSource = dataSource;
    }

    /**
     * @param transactionManager the transaction manager of {@code dataSource}
     * @param dataSource the data source whose connection the work receives
     * @return transactions with the data source's own isolation level and no timeout
     */
    public static SpringTransactions of(PlatformTransactionManager transactionManager, DataSource dataSource) {
        Objects.requireNonNull(transactionManager, "transactionManager");
        Objects.requireNonNull(dataSource, "dataSource");
        TransactionTemplate template = new TransactionTemplate(transactionManager);
        template.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
        return new SpringTransactions(template, dataSource);
    }

    /**
     * @param isolationLevel one of {@link TransactionDefinition}'s {@code ISOLATION_*} constants
     * @return transactions like these, at that isolation level
     * @throws IllegalArgumentException if the level is not one of those constants
     */
    public SpringTransactions withIsolation(int isolationLevel) {
        TransactionTemplate copy = new TransactionTemplate(Objects.requireNonNull(template.getTransactionManager()), template);
        copy.setIsolationLevel(isolationLevel);
        return new SpringTransactions(copy, dataSource);
    }

    @Override
    public <T, X extends Exception> T inTransaction(TxWork<Connection, T, X> work) throws X {
        Objects.requireNonNull(work, "work");
        boolean[] returned = {false};
        try {
            return template.execute(status -> {
                Connection connection = DataSourceUtils.getConnection(dataSource);
                try {
                    T result = work.apply(connection);
                    returned[0] = true;
                    return result;
                } catch (RuntimeException | Error e) {
                    throw e;
                } catch (Exception checked) {
                    throw new CheckedFailure(checked);
                } finally {
                    DataSourceUtils.releaseConnection(connection, dataSource);
                }
            });
        } catch (CheckedFailure failure) {
            @SuppressWarnings("unchecked")
            X checked = (X) failure.getCause();
            throw checked;
        } catch (RuntimeException failure) {
            if (!returned[0]) {
                throw failure; // the work's own, or a failure to begin: unchanged
            }
            // The work returned: this is the commit (the transaction is rolled back already).
            throw isRetryable(failure) ? new TransactionConflictException(null, failure)
                    : new IdempotencyStoreException(null, "the commit failed; nothing of the transaction was kept", failure);
        }
    }

    /**
     * Recognises conflicts as {@link RetryableFailures#isRetryable} does (SQLState class 40, MariaDB's
     * 1020, SQLite's busy errors, the library's retryable exceptions), and Spring's translation of
     * them: a {@link ConcurrencyFailureException} (deadlock, lock or serialization failure, optimistic
     * locking failure) anywhere in the cause chain.
     */
    @Override
    public boolean isRetryable(Throwable failure) {
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
            if (t instanceof ConcurrencyFailureException) {
                return true;
            }
        }
        return RetryableFailures.isRetryable(failure);
    }

    @Override
    public String toString() {
        return "SpringTransactions[" + template.getTransactionManager() + ", " + dataSource + "]";
    }

    /** Carries a checked exception of the work through {@link TransactionTemplate}, which rolls back on it. */
    private static final class CheckedFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        CheckedFailure(Exception cause) {
            super(null, cause, false, false);
        }
    }
}
