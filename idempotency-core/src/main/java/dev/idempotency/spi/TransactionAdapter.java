package dev.idempotency.spi;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.TransactionRequiredException;
import org.jspecify.annotations.Nullable;

/**
 * Finds, in a transaction of one type, the transaction of the type a store takes: a Jdbi
 * {@code Handle}'s JDBC {@code Connection}, the connection under a JPA {@code EntityManager}. With
 * {@link StoreAdapters#adapt(TransactionalStore, TransactionAdapter)} it turns a store of {@code C}
 * into a store of {@code D} without forwarding each primitive by hand.
 *
 * <p>It is applied once per primitive, before the store is called, and may refuse a transaction it
 * cannot use (a closed handle, one outside a transaction) by throwing: the exception reaches the
 * caller and nothing is written. It must be cheap and must not write, as
 * {@link TransactionalStore#checkTransaction} must not. Give it a {@code toString} that says what it
 * does: the adapted store's own names it.
 *
 * <p>Implementations must be thread-safe; one transaction is used by one thread at a time.
 *
 * @param <D> the transaction type the adapted store takes
 * @param <C> the transaction type of the store it adapts
 */
@FunctionalInterface
public interface TransactionAdapter<D, C> {

    /**
     * @param tx the caller's transaction, not {@code null}
     * @param key the key of the primitive about to run, for a refusal's message; for a batch its
     *     first key; {@code null} for a primitive without one ({@link TransactionalStore#savepoint},
     *     {@link IdempotencyStore#purgeExpired}, an empty batch)
     * @return the transaction the adapted store runs in, not {@code null}; its writes commit and roll
     *     back with {@code tx}
     * @throws TransactionRequiredException if {@code tx} cannot carry the record
     * @throws IdempotencyStoreException if finding the transaction fails
     */
    C inner(D tx, @Nullable IdempotencyKey key);
}
