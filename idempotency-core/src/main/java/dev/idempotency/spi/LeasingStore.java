package dev.idempotency.spi;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.IdempotencyStoreException;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * A store that also keeps leases: the primitives of lease mode and recovery phases
 * ({@link dev.idempotency.LeasedIdempotency}), for work with effects outside the database. Each
 * primitive runs in a short transaction that the engine begins and commits itself.
 *
 * <p>Every time a lease primitive needs is read from the <b>store's own clock</b> (for a database,
 * the server's), never passed in by the engine: application nodes whose clocks disagree must still
 * agree on when a lease ends. The records these primitives write are judged by that clock wherever
 * they are met (the clock rule of {@link IdempotencyStore}). A store must keep these promises, which {@code idempotency-testkit}
 * checks:
 * <ol>
 *   <li>{@link #claimLease} takes a key that has no record, or only an expired one, as attempt 1,
 *       with the request's owner token and a lease until {@code now + lease}.</li>
 *   <li>It never takes over a record in progress whose lease has not ended: it answers
 *       {@link LeaseClaim.Held} with the lease's end. Once the lease has ended (or was released),
 *       it takes the record over for the new owner token, counts one more attempt, and hands back
 *       the recovery point that an earlier attempt committed, unchanged. A record in progress whose
 *       fingerprint differs from the request's is never taken over, even once its lease ended: it
 *       answers {@link LeaseClaim.Held} with that record's fingerprint (the engine then answers
 *       {@code Mismatch}).</li>
 *   <li>A completed or failed, unexpired record is {@link LeaseClaim.Existing}.</li>
 *   <li>{@link #extendLease}, {@link #checkpoint}, {@link #completeLeased} and {@link #releaseLease}
 *       are fenced: they change the record only while the given owner token still holds it (no
 *       other attempt took it over: a token holds its record until then, after its lease ended or
 *       was released too; a completed record is held by no token), and report whether they did.</li>
 *   <li>A recovery point, once committed, is only replaced by a later phase's: it never goes back,
 *       neither by a take-over nor by a release.</li>
 * </ol>
 *
 * <p>Implementations must be thread-safe; one transaction is used by one thread at a time.
 *
 * @param <C> the transaction type
 */
public interface LeasingStore<C> extends IdempotencyStore<C> {

    /**
     * {@inheritDoc}
     *
     * @return a leasing store that reports to {@code listener}; {@code this} if there is nothing to
     *     report
     */
    @Override
    default LeasingStore<C> heardBy(IdempotencyListener listener) {
        return this;
    }

    /**
     * Claims the key under a lease, or finds its record.
     *
     * @param tx a transaction of the engine's own, committed right after
     * @param request the key, fingerprint, owner token and durations
     * @return what was found or claimed
     * @throws IdempotencyStoreException if the store fails
     */
    LeaseClaim claimLease(C tx, LeaseRequest request);

    /**
     * Moves the end of the lease to {@code now + lease}, if {@code ownerToken} still holds the key.
     *
     * <p>Fenced by the owner token alone, as the other fenced primitives are: an extend after the
     * lease ended succeeds as long as nobody took the record over, and that is safe. Every step that
     * acts on an ended lease (a client's claim, the recovery worker's) is a take-over through
     * {@link #claimLease}, which gives the record another token; the store orders that write and the
     * extend on the same record, so either the take-over comes first and the extend reports empty,
     * or the extend comes first and the claim answers {@link LeaseClaim.Held}. A purge judges the
     * record's expiry, never its lease. Until the take-over the key is as it would be had the lease
     * never ended. The extend does not look at the record's expiry (its retention): a call that
     * outlasts the retention can extend its lease on an expired record, which the next claim takes
     * as new; the stale attempt is still fenced out of recording (see {@code docs/model.md}).
     * A retention must outlast the longest call.
     *
     * @param tx a transaction of the engine's own
     * @param key the key
     * @param ownerToken the holder's owner token
     * @param lease the new lease, from the store's now
     * @return the new end of the lease; empty if the token no longer holds the key
     * @throws IdempotencyStoreException if the store fails
     */
    Optional<Instant> extendLease(C tx, IdempotencyKey key, String ownerToken, Duration lease);

    /**
     * Records a recovery point, if {@code ownerToken} still holds the key.
     *
     * @param tx the transaction that also carries the phase's own writes
     * @param key the key
     * @param ownerToken the holder's owner token
     * @param point the phase that commits with {@code tx}, and its value
     * @return whether it was recorded
     * @throws IdempotencyStoreException if the store fails
     */
    boolean checkpoint(C tx, IdempotencyKey key, String ownerToken, RecoveryPoint point);

    /**
     * Records the outcome (completed or failed), if {@code ownerToken} still holds the key, with
     * {@code completedAt} the store's now and the expiry {@code now + retention}.
     *
     * @param tx the transaction that also carries the finishing writes
     * @param ownerToken the holder's owner token
     * @param completion the key, status, codec, encoded result and retention
     * @return when it was recorded, by the store's clock; empty if the token no longer holds the key
     * @throws dev.idempotency.ResultTooLargeException if the result is within the policy's limit but
     *     the store's server would not accept the record (a statement or an item too large): thrown
     *     before anything is sent, its {@code reason()} naming the limit, so that the engine records
     *     the operation as failed instead of leaving the call to be run again
     * @throws IdempotencyStoreException if the store fails
     */
    Optional<Instant> completeLeased(C tx, String ownerToken, LeasedCompletion completion);

    /**
     * Ends the lease now, if {@code ownerToken} still holds the key, so that the next attempt takes
     * the record over at once. The record stays in progress, with its attempt count and recovery
     * point.
     *
     * @param tx a transaction of the engine's own
     * @param key the key
     * @param ownerToken the holder's owner token
     * @return whether the lease was ended
     * @throws IdempotencyStoreException if the store fails
     */
    boolean releaseLease(C tx, IdempotencyKey key, String ownerToken);
}
