package dev.idempotency.spi;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.TransactionRequiredException;
import java.util.ArrayList;
import java.util.List;

/**
 * A store that writes the key's record in the caller's own transaction: the primitives that
 * {@link dev.idempotency.Idempotency} (and {@link dev.idempotency.ManagedIdempotency}, in
 * transactions it runs) drives. The engine owns the protocol (validation, fingerprints, codecs,
 * outcomes); a store only claims, completes and releases records inside a transaction of type
 * {@code C}, atomically with the work's business change.
 *
 * <p>A store must keep these promises, which {@code idempotency-testkit} checks:
 * <ol>
 *   <li>{@link #claim} is atomic per key: of all transactions claiming one key, at most one gets
 *       {@link Claim.Acquired}; the others wait for it (up to the request's lock timeout) and then
 *       see its committed record, or claim the key themselves if it rolled back.</li>
 *   <li>A record written in a transaction is visible to other transactions only once that
 *       transaction commits, and is gone if it rolls back.</li>
 *   <li>A record whose {@code expiresAt} is at or before the request's {@code now} counts as absent
 *       and is claimed over.</li>
 *   <li>Keys are distinct by scope and id, compared exactly (case and every character count).</li>
 *   <li>{@link #complete} writes the completion's {@code completedAt} and {@code expiresAt} as given,
 *       to the millisecond, over the claim's expiry: time passes while a work runs, and a record
 *       expires its retention after its completion, not after its claim.</li>
 *   <li>{@link #purgeExpired} removes only records that have expired: a record in progress too, but
 *       only once its own expiry has passed, whoever holds it.</li>
 *   <li>Every key and result that the engine's {@link dev.idempotency.KeyPolicy} accepts is kept: a
 *       scope and an id of the largest length, of any printable ASCII character but the space, and a
 *       result of {@link dev.idempotency.KeyPolicy#maxResultBytes()}. A store whose schema holds less
 *       must say so, and its users must configure a policy within it.</li>
 * </ol>
 *
 * <p>Implementations must be thread-safe; one transaction is used by one thread at a time.
 *
 * @param <C> the transaction type: a JDBC {@code Connection}, a Jdbi {@code Handle}, a store's own
 */
public interface TransactionalStore<C> extends IdempotencyStore<C> {

    /**
     * {@inheritDoc}
     *
     * @return a transactional store that reports to {@code listener}; {@code this} if there is
     *     nothing to report
     */
    @Override
    default TransactionalStore<C> heardBy(IdempotencyListener listener) {
        return this;
    }

    /**
     * Refuses a transaction that cannot carry the record atomically with the caller's work (a
     * connection in auto-commit mode, a closed one). Called before anything is read or written, and
     * again when the work has returned, to see whether the work ended the transaction; so it must be
     * cheap and must not write.
     *
     * @param tx the caller's transaction
     * @param key the key about to be used, for the error message
     * @throws TransactionRequiredException if the transaction is unusable
     * @throws IdempotencyStoreException if the check itself fails
     */
    void checkTransaction(C tx, IdempotencyKey key);

    /**
     * Claims the key in {@code tx}, or finds its record.
     *
     * @param tx the caller's transaction
     * @param request the key, fingerprint, time and limits of this attempt
     * @return {@link Claim.Acquired} if this transaction now holds the key (an in-progress record is
     *     written in {@code tx}); {@link Claim.Existing} with an unexpired record committed by another
     *     transaction; {@link Claim.Busy} if another open transaction held the key for longer than
     *     the lock timeout
     * @throws IdempotencyStoreException if the store fails
     */
    Claim claim(C tx, ClaimRequest request);

    /**
     * Claims several keys in {@code tx}, or finds their records: {@link #claim} for a chunk of a batch
     * job. The engine passes the requests sorted by scope, then id, with no key twice, so that two
     * transactions whose chunks overlap take their locks in the same order and wait for each other
     * instead of deadlocking. The answers keep the promises of {@link #claim}, key by key.
     *
     * <p>The default claims one key after the other; a store that can claim many keys in one
     * statement overrides it.
     *
     * @param tx the caller's transaction
     * @param requests one request per key, sorted, no key twice
     * @return one claim per request, in the same order
     * @throws IdempotencyStoreException if the store fails
     */
    default List<Claim> claimAll(C tx, List<ClaimRequest> requests) {
        List<Claim> claims = new ArrayList<>(requests.size());
        for (ClaimRequest request : requests) {
            claims.add(claim(tx, request));
        }
        return claims;
    }

    /**
     * Writes the outcomes of several claimed keys: {@link #complete} for a chunk. The default
     * completes one after the other; a store that can write them in one batch overrides it.
     *
     * @param tx the transaction that holds the claims
     * @param completions one per claimed key
     * @throws IdempotencyStoreException if the store fails, or a claimed record is gone
     */
    default void completeAll(C tx, List<Completion> completions) {
        for (Completion completion : completions) {
            complete(tx, completion);
        }
    }

    /**
     * Writes the outcome of the work into the record this transaction claimed: its status, codec and
     * encoded result, and its {@code completedAt} and {@code expiresAt} as given, which replace the
     * claim's expiry.
     *
     * @param tx the transaction that holds the claim
     * @param completion the status, encoded result and times to record
     * @throws IdempotencyStoreException if the store fails, or the claimed record is gone
     */
    void complete(C tx, Completion completion);

    /**
     * Writes the key's record, complete with its outcome, in a transaction whose work has already
     * run: the write of {@link dev.idempotency.ManagedIdempotency#writeLast write-last mode},
     * which runs the work first and writes the record last, in a transaction the library commits.
     * The promises of {@link #claim} hold for it: of all transactions claiming or writing one key, at
     * most one gets {@link Claim.Acquired}; the others wait for it (up to the request's lock timeout)
     * and then see its committed record, or write the key themselves if it rolled back. An expired
     * record is replaced.
     *
     * <p>A store may leave the write to the commit of a {@link TransactionRunner} of its own that
     * sends it in the same round trip as the {@code COMMIT}: it then answers {@link Claim.Acquired}
     * at once, and that runner's commit, if the key turns out to be held, rolls back and throws
     * {@link LastWriteRefusedException} with what it found.
     *
     * <p>The default claims the key ({@link #claim}) and, if acquired, completes it at once
     * ({@link #complete}): correct for every store that keeps the promises of those two, at the cost
     * of two writes; a store that can write the completed record in one statement overrides it.
     *
     * @param tx the transaction, whose work has run; the caller rolls it back unless this returns
     *     {@link Claim.Acquired}
     * @param request the key, fingerprint, time and lock timeout, as for a claim
     * @param completion the outcome to record, for the same key
     * @return {@link Claim.Acquired} if the record is written in {@code tx} (or left to its commit);
     *     {@link Claim.Existing} with an unexpired record of another transaction, committed;
     *     {@link Claim.Busy} if another open transaction held the key past the lock timeout
     * @throws IdempotencyStoreException if the store fails
     */
    default Claim writeLast(C tx, ClaimRequest request, Completion completion) {
        Claim claim = claim(tx, request);
        if (claim instanceof Claim.Acquired) {
            complete(tx, completion);
        }
        return claim;
    }

    /**
     * Undoes this transaction's claim after the work failed, so that nothing is recorded even if
     * the caller commits.
     *
     * @param tx the transaction that holds the claim
     * @param key the claimed key
     * @throws IdempotencyStoreException if the store fails
     */
    void release(C tx, IdempotencyKey key);

    /**
     * Marks a point in {@code tx} to which the work's writes can be undone, keeping the claim. Used
     * only when the policy declares some failures final.
     *
     * @param tx the transaction
     * @return the savepoint
     * @throws IdempotencyStoreException if the store fails or cannot undo partial work
     */
    TxSavepoint savepoint(C tx);
}
