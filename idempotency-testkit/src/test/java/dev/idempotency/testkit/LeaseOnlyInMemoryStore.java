package dev.idempotency.testkit;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeaseOnlyStore;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.LeasedCompletion;
import dev.idempotency.spi.NoTransaction;
import dev.idempotency.spi.RecoveryPoint;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * The reference store seen as a store without transactions: each lease primitive runs in a
 * transaction of its own, committed before it returns, as one atomic script on a server would.
 * Thread-safe. Not final, so that a broken variant can change one primitive.
 */
class LeaseOnlyInMemoryStore implements LeaseOnlyStore {

    private final InMemoryIdempotencyStore inner;

    LeaseOnlyInMemoryStore(InMemoryIdempotencyStore inner) {
        this.inner = inner;
    }

    @Override
    public LeaseClaim claimLease(NoTransaction tx, LeaseRequest request) {
        return inner.transactions().inTransaction(t -> inner.claimLease(t, request));
    }

    @Override
    public Optional<Instant> extendLease(NoTransaction tx, IdempotencyKey key, String ownerToken, Duration lease) {
        return inner.transactions().inTransaction(t -> inner.extendLease(t, key, ownerToken, lease));
    }

    @Override
    public boolean checkpoint(NoTransaction tx, IdempotencyKey key, String ownerToken, RecoveryPoint point) {
        return inner.transactions().inTransaction(t -> inner.checkpoint(t, key, ownerToken, point));
    }

    @Override
    public Optional<Instant> completeLeased(NoTransaction tx, String ownerToken, LeasedCompletion completion) {
        return inner.transactions().inTransaction(t -> inner.completeLeased(t, ownerToken, completion));
    }

    @Override
    public boolean releaseLease(NoTransaction tx, IdempotencyKey key, String ownerToken) {
        return inner.transactions().inTransaction(t -> inner.releaseLease(t, key, ownerToken));
    }

    /** Deletes the record the token holds, as a fenced delete on a server would: nothing of the key is left. */
    @Override
    public boolean withdrawClaim(NoTransaction tx, IdempotencyKey key, String ownerToken) {
        return inner.transactions().inTransaction(t -> inner.withdrawClaim(t, key, ownerToken));
    }

    /** Expiry follows the kit's clock here, not a server's: purged as the reference store purges. */
    @Override
    public int purgeExpired(NoTransaction tx, Instant now, int limit) {
        return inner.transactions().inTransaction(t -> inner.purgeExpired(t, now, limit));
    }

    @Override
    public String toString() {
        return "LeaseOnlyInMemoryStore";
    }
}
