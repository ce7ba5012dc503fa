package dev.idempotency.jdbi;

import dev.idempotency.TxWork;
import dev.idempotency.jdbc.RetryableFailures;
import dev.idempotency.spi.TransactionRunner;
import java.util.Objects;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/**
 * Transactions that the library runs itself through a {@link Jdbi} instance:
 * {@code jdbi.inTransaction(handle -> work)}, so Jdbi opens the handle, commits when the work
 * returns, rolls back when it throws (the work's exception reaches the caller unchanged), and closes
 * the handle. Conflicts are recognised as {@link RetryableFailures#isRetryable} does, through Jdbi's
 * wrapping exceptions.
 *
 * <p>Immutable and thread-safe.
 */
public final class JdbiTransactions implements TransactionRunner<Handle> {

    private final Jdbi jdbi;

    private JdbiTransactions(Jdbi jdbi) {
        this.jdbi = jdbi;
    }

    /**
     * @param jdbi the Jdbi instance
     * @return transactions on its handles
     */
    public static JdbiTransactions of(Jdbi jdbi) {
        return new JdbiTransactions(Objects.requireNonNull(jdbi, "jdbi"));
    }

    @Override
    public <T, X extends Exception> T inTransaction(TxWork<Handle, T, X> work) throws X {
        Objects.requireNonNull(work, "work");
        return jdbi.inTransaction(work::apply);
    }

    @Override
    public boolean isRetryable(Throwable failure) {
        return RetryableFailures.isRetryable(failure);
    }

    @Override
    public String toString() {
        return "JdbiTransactions[" + jdbi + "]";
    }
}
