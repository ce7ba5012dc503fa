package dev.idempotency.jakarta.transaction;

import dev.idempotency.AbandonedClaimException;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.IdempotentCall;
import dev.idempotency.InvalidKeyException;
import dev.idempotency.Outcome;
import dev.idempotency.ResultCodecException;
import dev.idempotency.ResultTooLargeException;
import dev.idempotency.TransactionRequiredException;
import dev.idempotency.Work;
import jakarta.transaction.TransactionManager;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.UserTransaction;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * Runs work at most once per key inside the Jakarta Transactions (JTA) transaction of the calling
 * thread: a method of a bean annotated {@code @Transactional}, an EJB's container-managed
 * transaction, or code between {@code userTransaction.begin()} and {@code commit()}. The key's
 * record is written on a connection of the given {@code DataSource} taken inside that transaction;
 * the data source must be one that the transaction manager manages (a container's
 * {@code java:comp/env/jdbc/...} resource, Agroal with its Narayana integration, ...), which enlists
 * that connection in the transaction, as it enlists the connections that the business code takes
 * from it. The record then commits and rolls back with the business change, all or nothing.
 *
 * <pre>{@code
 * @Transactional
 * public String reserve(String tenant, String idempotencyKey, String sku) {
 *     IdempotencyKey key = IdempotencyKey.of(tenant, idempotencyKey);
 *     return idempotency.execute(key, () -> inventory.reserve(sku)).value();
 * }
 * }</pre>
 *
 * <p>Each call:
 * <ol>
 *   <li>validates the key against the engine's {@link dev.idempotency.KeyPolicy}
 *       ({@link InvalidKeyException});</li>
 *   <li>refuses to run unless a JTA transaction is active on this thread (none, one marked for
 *       rollback, one completing): {@link TransactionRequiredException}, saying which, and nothing
 *       written. A data source that the transaction manager does not manage gives connections in
 *       auto-commit mode, which the engine refuses as well;</li>
 *   <li>runs {@link Idempotency}'s protocol on the connection: claim, work, record (or replay,
 *       mismatch, in progress), then closes the connection's handle. The transaction manager commits
 *       or rolls back, when the transaction ends.</li>
 * </ol>
 * When {@code execute} throws, let the exception roll the transaction back (a runtime exception
 * leaving a {@code @Transactional} method does) or call {@code setRollbackOnly()}: the work's writes
 * go with the key's claim, and a retry runs the work again. After {@link Outcome.InProgress} roll
 * back too: on PostgreSQL the wait for the other holder may have aborted the transaction.
 *
 * <p>For transactions that the library begins and ends itself (lease mode, retries on a conflict,
 * the HTTP layer's {@code handle}), see {@link JtaTransactions}.
 *
 * <p>Immutable and thread-safe: build one per data source and share it.
 */
public final class JtaIdempotency {

    private final Idempotency<Connection> engine;
    private final DataSource dataSource;
    private final JtaStatus status;

    private JtaIdempotency(Idempotency<Connection> engine, DataSource dataSource, JtaStatus status) {
        this.engine = engine;
        this.dataSource = dataSource;
        this.status = status;
    }

    /**
     * @param engine the engine: store, key policy, clock and listener
     * @param dataSource a data source that the transaction manager manages
     * @param registry the container's registry ({@code java:comp/TransactionSynchronizationRegistry},
     *     or {@code @Resource}), which tells whether the thread's transaction is active
     * @return an instance
     */
    public static JtaIdempotency of(Idempotency<Connection> engine, DataSource dataSource, TransactionSynchronizationRegistry registry) {
        Objects.requireNonNull(registry, "registry");
        return new JtaIdempotency(Objects.requireNonNull(engine, "engine"), Objects.requireNonNull(dataSource, "dataSource"),
                registry::getTransactionStatus);
    }

    /**
     * @param engine the engine: store, key policy, clock and listener
     * @param dataSource a data source that the transaction manager manages
     * @param transactionManager the transaction manager, which tells whether the thread's transaction is active
     * @return an instance
     */
    public static JtaIdempotency of(Idempotency<Connection> engine, DataSource dataSource, TransactionManager transactionManager) {
        Objects.requireNonNull(transactionManager, "transactionManager");
        return new JtaIdempotency(Objects.requireNonNull(engine, "engine"), Objects.requireNonNull(dataSource, "dataSource"),
                transactionManager::getStatus);
    }

    /**
     * @param engine the engine: store, key policy, clock and listener
     * @param dataSource a data source that the transaction manager manages
     * @param userTransaction the application's {@code UserTransaction}, which tells whether the thread's transaction is active
     * @return an instance
     */
    public static JtaIdempotency of(Idempotency<Connection> engine, DataSource dataSource, UserTransaction userTransaction) {
        Objects.requireNonNull(userTransaction, "userTransaction");
        return new JtaIdempotency(Objects.requireNonNull(engine, "engine"), Objects.requireNonNull(dataSource, "dataSource"),
                userTransaction::getStatus);
    }

    /**
     * Runs {@code work} at most once for the call's key in the thread's JTA transaction, as
     * {@link Idempotency#execute(IdempotentCall, Object, Work)}.
     *
     * @param call the key, fingerprint and codec
     * @param work the business change; it must not commit, roll back or suspend the transaction
     * @param <T> the result type
     * @param <X> the work's checked exception
     * @return the outcome; never {@code null}
     * @throws X the work's own exception, unchanged
     * @throws InvalidKeyException if the policy refuses the key
     * @throws TransactionRequiredException if no JTA transaction is active on this thread
     * @throws AbandonedClaimException if an earlier work left the key's claim committed without its result
     * @throws ResultCodecException if the result cannot be encoded, or a replay cannot be decoded
     * @throws ResultTooLargeException if the encoded result is over the policy's limit
     * @throws IdempotencyStoreException if the store or the data source fails
     */
    public <T, X extends Exception> Outcome<T> execute(IdempotentCall<T> call, Work<T, X> work) throws X {
        Objects.requireNonNull(call, "call");
        Objects.requireNonNull(work, "work");
        IdempotencyKey key = engine.keyPolicy().validate(call.key());
        Connection connection = enlistedConnection(key);
        try {
            return engine.execute(call, connection, work);
        } finally {
            close(connection);
        }
    }

    /**
     * The shortcut of {@link #execute(IdempotentCall, Work)} for {@code IdempotentCall.of(key)}: no
     * fingerprint, a built-in codec chosen by the result's type.
     *
     * @param key the key
     * @param work the business change; it must not commit, roll back or suspend the transaction
     * @param <T> the result type
     * @param <X> the work's checked exception
     * @return the outcome; never {@code null}
     * @throws X the work's own exception, unchanged
     * @throws InvalidKeyException if the policy refuses the key
     * @throws TransactionRequiredException if no JTA transaction is active on this thread
     * @throws IdempotencyStoreException if the store or the data source fails
     */
    public <T, X extends Exception> Outcome<T> execute(IdempotencyKey key, Work<T, X> work) throws X {
        Objects.requireNonNull(work, "work");
        IdempotencyKey valid = engine.keyPolicy().validate(key);
        Connection connection = enlistedConnection(valid);
        try {
            return engine.execute(valid, connection, work);
        } finally {
            close(connection);
        }
    }

    /**
     * Deletes up to {@code limit} expired records in the thread's JTA transaction.
     *
     * @param limit the most records to delete
     * @return how many were deleted
     * @throws TransactionRequiredException if no JTA transaction is active on this thread
     * @throws IdempotencyStoreException if the store fails
     */
    public int purgeExpired(int limit) {
        Connection connection = enlistedConnection(null);
        try {
            return engine.purgeExpired(connection, limit);
        } finally {
            close(connection);
        }
    }

    /** @return the engine: store, key policy, clock and listener */
    public Idempotency<Connection> engine() {
        return engine;
    }

    /** @return the data source whose connections carry the records */
    public DataSource dataSource() {
        return dataSource;
    }

    /** A connection taken inside the active transaction, which the transaction manager enlisted. */
    private Connection enlistedConnection(@Nullable IdempotencyKey key) {
        status.requireActive(key, "JtaIdempotency");
        try {
            return dataSource.getConnection();
        } catch (SQLException e) {
            throw new IdempotencyStoreException(key, "could not get a connection of the JTA transaction from the data source", e);
        }
    }

    /** Closes the handle; the enlisted connection stays with the transaction until it ends. */
    static void close(Connection connection) {
        try {
            connection.close();
        } catch (SQLException ignored) {
            // The transaction manager ends the connection's part in the transaction; nothing to act on here.
        }
    }

    @Override
    public String toString() {
        return "JtaIdempotency[" + engine + ", " + dataSource + "]";
    }
}
