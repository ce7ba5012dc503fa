package dev.idempotency.spring;

import dev.idempotency.AbandonedClaimException;
import dev.idempotency.DuplicateKeyInChunkException;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.IdempotentCall;
import dev.idempotency.InvalidKeyException;
import dev.idempotency.ItemWork;
import dev.idempotency.Outcome;
import dev.idempotency.ResultCodecException;
import dev.idempotency.ResultTooLargeException;
import dev.idempotency.TransactionRequiredException;
import dev.idempotency.Work;
import dev.idempotency.jdbc.Idempotent;
import java.sql.Connection;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Runs work at most once per key inside the transaction that Spring manages on the calling thread:
 * a {@code @Transactional} method, a {@code TransactionTemplate} callback, with a
 * {@code DataSourceTransactionManager}, {@code JdbcTransactionManager} or {@code JpaTransactionManager}.
 * The key's record is written on the connection Spring bound to that transaction (taken through
 * {@link DataSourceUtils}, as {@code JdbcTemplate} takes it), so it commits and rolls back with
 * everything else the transaction does: {@code JdbcTemplate} statements, JPA entities flushed at
 * commit, and the record, all or nothing.
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
 *   <li>refuses to run without an active, read-write Spring transaction on this thread, or when that
 *       transaction does not hold a connection of this {@code DataSource} (a transaction manager of
 *       another data source): {@link TransactionRequiredException}, saying how to fix it, and
 *       nothing written;</li>
 *   <li>runs {@link Idempotency}'s protocol on the transaction's connection: claim, work, record (or
 *       replay, mismatch, in progress). The engine never commits, rolls back or closes the
 *       connection: Spring does, when the transaction ends.</li>
 * </ol>
 * When {@code execute} throws, let the exception leave the {@code @Transactional} method (or mark
 * the transaction rollback-only): Spring then rolls back the work's writes together with the key's
 * claim, and a retry runs the work again. After {@link Outcome.InProgress} roll back too (throw, or
 * {@code setRollbackOnly()}): on PostgreSQL the wait for the other holder may have aborted the
 * transaction.
 *
 * <p><b>JPA.</b> Entities the work persists are written by Hibernate when it flushes, at commit at
 * the latest, in the same transaction as the record. A final failure (declared in the key policy)
 * undoes the work's writes to a JDBC savepoint, which does not reach entities still waiting in the
 * persistence context: with final failures and JPA, throw them before persisting anything, or flush
 * and clear as the work's first step.
 *
 * <p>Immutable and thread-safe: build one per data source and share it.
 */
public final class SpringIdempotency {

    private final Idempotency<Connection> engine;
    private final DataSource dataSource;

    private SpringIdempotency(Idempotency<Connection> engine, DataSource dataSource) {
        this.engine = engine;
        this.dataSource = dataSource;
    }

    /**
     * @param dataSource the data source whose Spring-managed transactions carry the records; a
     *     {@link TransactionAwareDataSourceProxy} is unwrapped to its target
     * @return an instance on the default engine ({@link Idempotent#ofDefaults()}: table
     *     {@code idempotency_record}, the default key policy)
     */
    public static SpringIdempotency of(DataSource dataSource) {
        return of(Idempotent.ofDefaults(), dataSource);
    }

    /**
     * @param engine the engine: store, key policy, clock and listener (built with
     *     {@link Idempotent#builder()} or {@code Idempotency.builder(store)})
     * @param dataSource the data source whose Spring-managed transactions carry the records; a
     *     {@link TransactionAwareDataSourceProxy} is unwrapped to its target
     * @return an instance
     */
    public static SpringIdempotency of(Idempotency<Connection> engine, DataSource dataSource) {
        Objects.requireNonNull(engine, "engine");
        Objects.requireNonNull(dataSource, "dataSource");
        DataSource target = dataSource instanceof TransactionAwareDataSourceProxy proxy && proxy.getTargetDataSource() != null
                ? proxy.getTargetDataSource() : dataSource;
        return new SpringIdempotency(engine, target);
    }

    /**
     * Runs {@code work} at most once for the call's key in the current Spring transaction, with the
     * call's fingerprint and codec, or one chosen by the result's type, as
     * {@link Idempotency#execute(IdempotentCall, Object, Work)}.
     *
     * @param call the key, fingerprint and codec
     * @param work the business change; it must not commit, roll back or suspend the transaction
     * @param <T> the result type
     * @param <X> the work's checked exception
     * @return the outcome; never {@code null}
     * @throws X the work's own exception, unchanged
     * @throws InvalidKeyException if the policy refuses the key
     * @throws TransactionRequiredException if no suitable Spring transaction is active (see the class comment)
     * @throws AbandonedClaimException if an earlier work left the key's claim committed without its result
     * @throws ResultCodecException if the result cannot be encoded (no built-in codec fits it), or a replay cannot be
     *     decoded
     * @throws ResultTooLargeException if the encoded result is over the policy's limit
     * @throws IdempotencyStoreException if the store fails
     */
    public <T, X extends Exception> Outcome<T> execute(IdempotentCall<T> call, Work<T, X> work) throws X {
        Objects.requireNonNull(call, "call");
        return inTransaction(call.key(), work, connection -> engine.execute(call, connection, work));
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
     * @throws TransactionRequiredException if no suitable Spring transaction is active (see the class comment)
     * @throws AbandonedClaimException if an earlier work left the key's claim committed without its result
     * @throws ResultCodecException if no built-in codec fits the result, or a replay cannot be decoded
     * @throws ResultTooLargeException if the encoded result is over the policy's limit
     * @throws IdempotencyStoreException if the store fails
     */
    public <T, X extends Exception> Outcome<T> execute(IdempotencyKey key, Work<T, X> work) throws X {
        return inTransaction(key, work, connection -> engine.execute(key, connection, work));
    }

    /** Validates the key, then runs {@code execute} on the current Spring transaction's connection. */
    private <T, X extends Exception> Outcome<T> inTransaction(@Nullable IdempotencyKey key, Work<T, X> work,
                                                              OnConnection<T, X> execute) throws X {
        Objects.requireNonNull(work, "work");
        IdempotencyKey valid = engine.keyPolicy().validate(key);
        Connection connection = transactionalConnection(valid);
        try {
            return execute.apply(connection);
        } finally {
            DataSourceUtils.releaseConnection(connection, dataSource);
        }
    }

    /** One engine call on the transaction's connection. */
    @FunctionalInterface
    private interface OnConnection<T, X extends Exception> {
        Outcome<T> apply(Connection connection) throws X;
    }

    /**
     * Runs one chunk of items in the current Spring transaction, each with its own call, as
     * {@link Idempotency#executeChunk(Object, List, Function, ItemWork)}.
     *
     * @param items the chunk's items; at most a few thousand
     * @param callOf the call of an item: its key, fingerprint (or none) and codec (or none, to choose
     *     a built-in one by the result's type)
     * @param work the business change for one item
     * @param <I> the item type
     * @param <T> the result type
     * @param <X> the work's checked exception
     * @return one outcome per item, in input order
     * @throws X an item's own exception, unchanged
     * @throws InvalidKeyException if the policy refuses an item's key
     * @throws DuplicateKeyInChunkException if two items have the same key
     * @throws TransactionRequiredException if no suitable Spring transaction is active
     * @throws ResultCodecException if a result cannot be encoded, or a replay cannot be decoded
     * @throws ResultTooLargeException if an encoded result is over the policy's limit
     * @throws IdempotencyStoreException if the store fails
     */
    public <I, T, X extends Exception> List<Outcome<T>> executeChunk(List<? extends I> items,
            Function<? super I, IdempotentCall<T>> callOf, ItemWork<? super I, T, X> work) throws X {
        Objects.requireNonNull(items, "items");
        Connection connection = transactionalConnection(null);
        try {
            return engine.executeChunk(connection, items, callOf, work);
        } finally {
            DataSourceUtils.releaseConnection(connection, dataSource);
        }
    }

    /**
     * Deletes up to {@code limit} expired records in the current Spring transaction. Call it from a
     * scheduled method with a short transaction of its own, and again while it returns {@code limit}.
     *
     * @param limit the most records to delete
     * @return how many were deleted
     * @throws TransactionRequiredException if no suitable Spring transaction is active
     * @throws IdempotencyStoreException if the store fails
     */
    public int purgeExpired(int limit) {
        Connection connection = transactionalConnection(null);
        try {
            return engine.purgeExpired(connection, limit);
        } finally {
            DataSourceUtils.releaseConnection(connection, dataSource);
        }
    }

    /** @return the engine: store, key policy, clock and listener */
    public Idempotency<Connection> engine() {
        return engine;
    }

    /** @return the data source whose transactions carry the records */
    public DataSource dataSource() {
        return dataSource;
    }

    /**
     * The connection of the Spring transaction active on this thread, checked to be one that can
     * carry the record atomically; released by the caller with {@link DataSourceUtils#releaseConnection}.
     */
    private Connection transactionalConnection(@Nullable IdempotencyKey key) {
        if (!TransactionSynchronizationManager.isActualTransactionActive()) {
            throw new TransactionRequiredException(key, "no Spring-managed transaction is active on this thread, so the key's"
                    + " record could not be committed atomically with your change. Call it from a @Transactional method"
                    + " (a public method of a Spring bean, called from another bean through its proxy, with a propagation"
                    + " that starts or joins a transaction), or inside transactionTemplate.execute(...). Nothing was written");
        }
        if (TransactionSynchronizationManager.isCurrentTransactionReadOnly()) {
            throw new TransactionRequiredException(key, "the Spring transaction is read-only (@Transactional(readOnly = true)),"
                    + " so the key's record cannot be written; run execute in a read-write transaction. Nothing was written");
        }
        // Checked before DataSourceUtils.getConnection, which would otherwise open a connection of its
        // own, in auto-commit mode, and bind it to the transaction's synchronization.
        if (!(TransactionSynchronizationManager.getResource(dataSource) instanceof ConnectionHolder)) {
            throw new TransactionRequiredException(key, "a Spring transaction is active, but it holds no connection of the"
                    + " DataSource given to SpringIdempotency (" + dataSource + "): its transaction manager manages"
                    + " another data source, or none (JTA). Use a DataSourceTransactionManager, JdbcTransactionManager or"
                    + " JpaTransactionManager on this DataSource, or build SpringIdempotency on the DataSource your"
                    + " transaction manager uses. Nothing was written");
        }
        Connection connection;
        try {
            connection = DataSourceUtils.getConnection(dataSource);
        } catch (CannotGetJdbcConnectionException e) {
            throw new IdempotencyStoreException(key, "could not get the connection of the Spring transaction", e);
        }
        return connection;
    }

    @Override
    public String toString() {
        return "SpringIdempotency[" + engine + ", " + dataSource + "]";
    }
}
