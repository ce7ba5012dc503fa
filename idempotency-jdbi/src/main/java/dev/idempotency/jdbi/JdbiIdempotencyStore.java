package dev.idempotency.jdbi;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.TransactionRequiredException;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spi.TransactionalRecoveringStore;
import dev.idempotency.spi.StoreAdapters;
import dev.idempotency.spi.TransactionAdapter;
import java.sql.Connection;
import java.util.Objects;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.JdbiException;
import org.jspecify.annotations.Nullable;

/**
 * The JDBC store for Jdbi: a {@link JdbcIdempotencyStore} adapted ({@link StoreAdapters}) to take a
 * Jdbi {@link Handle}, each call run with the handle's own connection ({@link Handle#getConnection()}),
 * so the key's record is written in the handle's transaction and commits or rolls back with it.
 * Jdbi's transaction handling stays in charge: {@code jdbi.inTransaction(handle -> ...)} commits when
 * the callback returns and rolls back when it throws, and the store never ends a transaction itself.
 *
 * <p>A handle that is closed or not inside a transaction is refused with
 * {@link TransactionRequiredException} before anything is written, by every primitive.
 *
 * <p>Not instantiable. The stores it makes are immutable and thread-safe; share one.
 */
public final class JdbiIdempotencyStore {

    private JdbiIdempotencyStore() {
    }

    /**
     * @param jdbc the store that does the work (table name, dialect)
     * @return a store for Jdbi handles
     */
    public static TransactionalRecoveringStore<Handle> of(JdbcIdempotencyStore jdbc) {
        return StoreAdapters.adapt(Objects.requireNonNull(jdbc, "jdbc"), HandleConnection.INSTANCE);
    }

    /** @return a store for Jdbi handles on {@link JdbcIdempotencyStore#ofDefaults()} */
    public static TransactionalRecoveringStore<Handle> ofDefaults() {
        return of(JdbcIdempotencyStore.ofDefaults());
    }

    /** A handle's connection, if the handle is open and inside a transaction. */
    private enum HandleConnection implements TransactionAdapter<Handle, Connection> {
        INSTANCE;

        @Override
        public Connection inner(Handle tx, @Nullable IdempotencyKey key) {
            if (tx.isClosed()) {
                throw new TransactionRequiredException(key, "the Jdbi handle is closed; nothing was written");
            }
            boolean inTransaction;
            try {
                inTransaction = tx.isInTransaction();
            } catch (JdbiException e) {
                throw new IdempotencyStoreException(key, "could not ask the Jdbi handle whether it is in a transaction", e);
            }
            if (!inTransaction) {
                throw new TransactionRequiredException(key, "the Jdbi handle is not inside a transaction, so the key's record could"
                        + " not be committed atomically with your change; call execute inside jdbi.inTransaction(handle -> ...)"
                        + " or useTransaction, or after handle.begin(). Nothing was written");
            }
            return tx.getConnection();
        }

        @Override
        public String toString() {
            return "Handle.getConnection()";
        }
    }
}
