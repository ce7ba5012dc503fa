package dev.idempotency.spi;

import dev.idempotency.IdempotencyKey;
import java.time.Instant;

/**
 * A store that keeps leases but cannot share a transaction with the caller's business change
 * (Redis, DynamoDB): each primitive is one atomic operation on its server, applied at once, under
 * {@link NoTransaction}. It serves lease mode and everything built on it
 * ({@link dev.idempotency.ManagedIdempotency#lease lease} and {@link dev.idempotency.ManagedIdempotency#run
 * phases}, over {@link NoTransaction#runner()}); the promises of {@link LeasingStore} hold for it,
 * every primitive taking effect when it returns, since there is no commit to wait for and no
 * rollback to undo it.
 *
 * <p>The modes that record the key inside a transaction with the work
 * ({@code Idempotency.execute} and {@code executeChunk}, {@code ManagedIdempotency.execute},
 * {@code writeLast} and {@code executeChunk}) refuse an engine over such a store before anything is
 * read or written, saying so; the transactional primitives here refuse too, for a caller that
 * reaches them some other way. The phases of lease mode run with {@link NoTransaction#NONE}: a
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
     * Refuses: there is no transaction to check.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    default void checkTransaction(NoTransaction tx, IdempotencyKey key) {
        throw refusal(this, key);
    }

    /**
     * Refuses: a claim inside a transaction needs one.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    default Claim claim(NoTransaction tx, ClaimRequest request) {
        throw refusal(this, request.key());
    }

    /**
     * Refuses: there is no transactional claim to complete.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    default void complete(NoTransaction tx, Completion completion) {
        throw refusal(this, completion.key());
    }

    /**
     * Refuses: there is no transactional claim to release.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    default void release(NoTransaction tx, IdempotencyKey key) {
        throw refusal(this, key);
    }

    /**
     * Refuses: there is no transaction to undo writes in.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    default TxSavepoint savepoint(NoTransaction tx) {
        throw refusal(this, null);
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

    private static UnsupportedOperationException refusal(LeaseOnlyStore store, IdempotencyKey key) {
        return new UnsupportedOperationException((key == null ? "" : "key " + key + ": ") + "the store " + store
                + " keeps leases only: it has no transactional claim (checkTransaction, claim, complete, release, savepoint);"
                + " lease mode uses claimLease and the fenced lease primitives. Nothing was read or written");
    }
}
