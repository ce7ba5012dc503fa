package dev.idempotency.spi;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import java.time.Instant;

/**
 * A store that keeps leases but cannot share a transaction with the caller's business change
 * (Redis, DynamoDB): each primitive is one atomic operation on its server, applied at once, under
 * {@link NoTransaction}. It serves lease mode and everything built on it
 * ({@link dev.idempotency.LeasedIdempotency#of(LeaseOnlyStore)}, over {@link NoTransaction#runner()}); the
 * promises of {@link LeasingStore} hold for it, every primitive taking effect when it returns, since
 * there is no commit to wait for and no rollback to undo it.
 *
 * <p>It is not a {@link TransactionalStore}: the modes that record the key inside a transaction with
 * the work ({@link dev.idempotency.Idempotency}, {@link dev.idempotency.ManagedIdempotency}) do not
 * take it, and handing it to them does not compile. The phases of lease mode run with {@link NoTransaction#NONE}: a
 * prepare's or a finish's own writes, if any, are not atomic with the recovery point or the result
 * (the store records those by itself, fenced).
 *
 * <p>Records expire on the store's own server (a key's time to live), so {@link #purgeExpired}
 * removes nothing and returns 0.
 *
 * <p>Implementations must be thread-safe.
 */
public interface LeaseOnlyStore extends LeasingStore<NoTransaction> {

    /**
     * {@inheritDoc}
     *
     * @return a lease-only store that reports to {@code listener}; {@code this} if there is nothing
     *     to report
     */
    @Override
    default LeaseOnlyStore heardBy(IdempotencyListener listener) {
        return this;
    }

    /**
     * Withdraws a claim that has recorded nothing else: deletes the key's record if
     * {@code ownerToken} still holds it (fenced as {@link #releaseLease} is), so that nothing of the
     * key is left, as the rollback of a claim's transaction leaves nothing on a database. The engine
     * calls it when the prepare phase's value cannot be recorded (over the policy's or the store's
     * size limit, or not encodable): the claim has taken effect on the server, and without this the
     * key would stay in progress, refusing another fingerprint, until its retention ends.
     *
     * <p>The default only ends the lease ({@link #releaseLease}) and answers {@code false}: the record
     * stays in progress, without a recovery point, and the next attempt takes it over at once.
     *
     * @param tx {@link NoTransaction#NONE}
     * @param key the key
     * @param ownerToken the holder's owner token
     * @return whether the record was deleted; {@code false} if it was kept (the token no longer holds
     *     it, or the store only ended the lease)
     * @throws dev.idempotency.IdempotencyStoreException if the store fails
     */
    default boolean withdrawClaim(NoTransaction tx, IdempotencyKey key, String ownerToken) {
        releaseLease(tx, key, ownerToken);
        return false;
    }

    /**
     * Removes nothing: the store's server expires records itself.
     *
     * @return 0
     */
    @Override
    default int purgeExpired(NoTransaction tx, Instant now, int limit) {
        return 0;
    }
}
