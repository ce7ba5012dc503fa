package dev.idempotency.testkit;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.TransactionalStore;
import dev.idempotency.spi.TxSavepoint;
import java.time.Instant;

/** Forwards to the reference store; a broken variant overrides one method. */
class ForwardingStore implements TransactionalStore<InMemoryIdempotencyStore.Transaction> {

    final InMemoryIdempotencyStore inner;

    ForwardingStore(InMemoryIdempotencyStore inner) {
        this.inner = inner;
    }

    @Override
    public void checkTransaction(InMemoryIdempotencyStore.Transaction tx, IdempotencyKey key) {
        inner.checkTransaction(tx, key);
    }

    @Override
    public Claim claim(InMemoryIdempotencyStore.Transaction tx, ClaimRequest request) {
        return inner.claim(tx, request);
    }

    @Override
    public void complete(InMemoryIdempotencyStore.Transaction tx, Completion completion) {
        inner.complete(tx, completion);
    }

    @Override
    public void release(InMemoryIdempotencyStore.Transaction tx, IdempotencyKey key) {
        inner.release(tx, key);
    }

    @Override
    public TxSavepoint savepoint(InMemoryIdempotencyStore.Transaction tx) {
        return inner.savepoint(tx);
    }

    @Override
    public int purgeExpired(InMemoryIdempotencyStore.Transaction tx, Instant now, int limit) {
        return inner.purgeExpired(tx, now, limit);
    }
}
