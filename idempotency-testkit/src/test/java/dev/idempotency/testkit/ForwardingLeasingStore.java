package dev.idempotency.testkit;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.LeasedCompletion;
import dev.idempotency.spi.LeasingStore;
import dev.idempotency.spi.RecoveryPoint;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Forwards every primitive, leases included, to the reference store; a broken variant overrides one.
 * Remembers the owner token of each key's latest acquired claim, as a broken store that cheats on
 * fencing would.
 */
class ForwardingLeasingStore extends ForwardingStore implements LeasingStore<InMemoryIdempotencyStore.Transaction> {

    /** Reports nothing: it is both a transactional and a leasing store, and says so with its own type. */
    @Override
    public ForwardingLeasingStore heardBy(dev.idempotency.IdempotencyListener listener) {
        return this;
    }


    final Map<IdempotencyKey, String> owners = new ConcurrentHashMap<>();

    ForwardingLeasingStore(InMemoryIdempotencyStore inner) {
        super(inner);
    }

    @Override
    public LeaseClaim claimLease(InMemoryIdempotencyStore.Transaction tx, LeaseRequest request) {
        LeaseClaim claim = inner.claimLease(tx, request);
        if (claim instanceof LeaseClaim.Acquired) {
            owners.put(request.key(), request.ownerToken());
        }
        return claim;
    }

    @Override
    public Optional<Instant> extendLease(InMemoryIdempotencyStore.Transaction tx, IdempotencyKey key, String ownerToken, Duration lease) {
        return inner.extendLease(tx, key, ownerToken, lease);
    }

    @Override
    public boolean checkpoint(InMemoryIdempotencyStore.Transaction tx, IdempotencyKey key, String ownerToken, RecoveryPoint point) {
        return inner.checkpoint(tx, key, ownerToken, point);
    }

    @Override
    public Optional<Instant> completeLeased(InMemoryIdempotencyStore.Transaction tx, String ownerToken, LeasedCompletion completion) {
        return inner.completeLeased(tx, ownerToken, completion);
    }

    @Override
    public boolean releaseLease(InMemoryIdempotencyStore.Transaction tx, IdempotencyKey key, String ownerToken) {
        return inner.releaseLease(tx, key, ownerToken);
    }
}
