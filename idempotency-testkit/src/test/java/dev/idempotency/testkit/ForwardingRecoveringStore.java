package dev.idempotency.testkit;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.spi.PendingOperation;
import dev.idempotency.spi.TransactionalRecoveringStore;
import java.util.List;

/** Forwards every primitive, the named operations' included, to the reference store; a broken variant overrides one. */
class ForwardingRecoveringStore extends ForwardingLeasingStore implements TransactionalRecoveringStore<InMemoryIdempotencyStore.Transaction> {

    @Override
    public ForwardingRecoveringStore heardBy(dev.idempotency.IdempotencyListener listener) {
        return this;
    }

    ForwardingRecoveringStore(InMemoryIdempotencyStore inner) {
        super(inner);
    }

    @Override
    public boolean enlist(InMemoryIdempotencyStore.Transaction tx, IdempotencyKey key, String ownerToken, String operation) {
        return inner.enlist(tx, key, ownerToken, operation);
    }

    @Override
    public void delist(InMemoryIdempotencyStore.Transaction tx, IdempotencyKey key) {
        inner.delist(tx, key);
    }

    @Override
    public List<PendingOperation> pending(InMemoryIdempotencyStore.Transaction tx, IdempotencyKey after, int limit) {
        return inner.pending(tx, after, limit);
    }
}
