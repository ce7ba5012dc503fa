package dev.idempotency.testkit;

import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.TransactionRunner;
import java.time.InstantSource;
import java.util.List;

/** The reference store passes the contract, its leases following the kit's clock. */
class InMemoryStoreContractTest extends IdempotencyStoreContract<InMemoryIdempotencyStore.Transaction> {

    private InMemoryIdempotencyStore store;

    @Override
    protected IdempotencyStore<InMemoryIdempotencyStore.Transaction> createStore(InstantSource clock) {
        store = new InMemoryIdempotencyStore(clock);
        return store;
    }

    @Override
    protected InMemoryIdempotencyStore.Transaction begin() {
        return store.begin();
    }

    @Override
    protected void commit(InMemoryIdempotencyStore.Transaction tx) {
        store.commit(tx);
    }

    @Override
    protected void rollback(InMemoryIdempotencyStore.Transaction tx) {
        store.rollback(tx);
    }

    @Override
    protected TransactionRunner<InMemoryIdempotencyStore.Transaction> transactions() {
        return store.transactions();
    }

    /** A transaction of another store: open, but it cannot carry this store's records. */
    @Override
    protected List<UnusableTransaction<InMemoryIdempotencyStore.Transaction>> unusableTransactions() {
        InMemoryIdempotencyStore other = new InMemoryIdempotencyStore();
        InMemoryIdempotencyStore.Transaction foreign = other.begin();
        return List.of(new UnusableTransaction<>("a transaction of another store", foreign, () -> other.rollback(foreign)));
    }
}
