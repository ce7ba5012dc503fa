package dev.idempotency.spi;

import dev.idempotency.IdempotencyListener;
import dev.idempotency.IdempotencyStoreException;
import java.time.Instant;

/**
 * Where key records live: what every store has, whatever it can do. A store's capabilities are
 * types, and an engine takes the one it needs, so that a store is never handed to a mode it cannot
 * serve:
 * <ul>
 *   <li>{@link TransactionalStore}: the key's record written in the caller's own transaction
 *       ({@link dev.idempotency.Idempotency}, {@link dev.idempotency.ManagedIdempotency});</li>
 *   <li>{@link LeasingStore}: lease mode, for work with effects outside the database
 *       ({@link dev.idempotency.LeasedIdempotency}); {@link RecoveringStore} adds the list of named
 *       operations in progress that a {@link dev.idempotency.RecoveryWorker} resumes;</li>
 *   <li>{@link LeaseOnlyStore}: a leasing store without transactions (Redis, DynamoDB);</li>
 *   <li>{@link TransactionalRecoveringStore}: all of the first two at once (the JDBC store).</li>
 * </ul>
 *
 * <p><b>The clock rule: a record is judged by the clock that timed it.</b> A record written by a
 * transactional primitive ({@code claim}, {@code complete}, {@code writeLast}) carries times of the
 * engine's clock, handed in through {@link ClaimRequest} and {@link Completion}, and is judged by
 * the engine's {@code now}. A record written by a lease primitive ({@code claimLease},
 * {@code completeLeased}) carries times of the store's own clock (for a database, the server's),
 * and is judged by the store's clock only, wherever it is met: by the lease primitives, and also by
 * a transactional {@link TransactionalStore#claim claim} or {@link TransactionalStore#writeLast
 * writeLast} and by {@link #purgeExpired}, whose {@code now} then does not decide. So application
 * nodes whose clocks disagree with the store's never take over, replace or purge a lease record
 * early, nor keep one past its end by the store's clock. {@code idempotency-testkit} checks the
 * rule with a node whose clock is hours ahead of the store's and one hours behind.
 *
 * <p>Implementations must be thread-safe; one transaction is used by one thread at a time.
 *
 * @param <C> the transaction type: a JDBC {@code Connection}, a Jdbi {@code Handle},
 *     {@link NoTransaction} for a store without transactions
 */
public interface IdempotencyStore<C> {

    /**
     * This store, reporting what it finds on its own (a database whose commits are not durable,
     * {@link IdempotencyListener#onNonDurableCommits}) to {@code listener}. The listener is given
     * once, to the engine: {@link dev.idempotency.Idempotency} calls this in its constructor with its
     * own listener and uses the store returned for everything, so a store takes no listener of its
     * own.
     *
     * <p>The default returns {@code this}: a store that reports nothing has nothing to do. A store
     * that reports returns a copy that tells {@code listener} instead of the listener it had, the
     * same in everything else: the same records, configuration and thread safety, and a
     * store of every capability this one has. Each capability
     * ({@link TransactionalStore}, {@link LeasingStore}, {@link RecoveringStore}, {@link LeaseOnlyStore})
     * narrows the type returned, so a store that has two of them overrides this with its own type. A copy of a copy tells the last listener only.
     *
     * @param listener the engine's listener; {@link IdempotencyListener#NONE} if it has none
     * @return a store that reports to {@code listener}; {@code this} if there is nothing to report
     */
    default IdempotencyStore<C> heardBy(IdempotencyListener listener) {
        return this;
    }

    /**
     * Deletes at most {@code limit} records that have expired: a record timed by the engine's clock
     * once its expiry is at or before {@code now}, a record written by a lease primitive once its
     * expiry has passed by the store's own clock (the clock rule above). A store that
     * can tell abandoned claims (in progress, committed, with no lease) among them tells the
     * listener it was given through {@link #heardBy} how many it deleted
     * ({@link IdempotencyListener#onAbandonedClaimsPurged}); one that cannot tells nothing.
     *
     * @param tx the transaction to delete in; the caller commits it
     * @param now the current time by the engine's clock
     * @param limit the largest number of records to delete, at least 1
     * @return how many records were deleted
     * @throws IdempotencyStoreException if the store fails
     */
    int purgeExpired(C tx, Instant now, int limit);
}
