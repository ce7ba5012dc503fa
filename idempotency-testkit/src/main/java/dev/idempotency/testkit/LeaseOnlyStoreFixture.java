package dev.idempotency.testkit;

import dev.idempotency.spi.NoTransaction;
import dev.idempotency.spi.TransactionRunner;

/**
 * The fixture of a store without transactions, a {@link dev.idempotency.spi.LeaseOnlyStore}: its
 * hooks of transactions are answered once, here ({@link #begin()} gives
 * {@link NoTransaction#NONE}, commit and rollback do nothing, and the engine's transactions are
 * {@link NoTransaction#runner()}). A test class extends it and implements the lease parts,
 * {@link LeasePrimitiveContract} and {@link LeasedCallContract}; its {@link #reset()} must empty
 * the store's server, since nothing is purged.
 *
 * <pre>{@code
 * class MyKeyValueStoreContractTest extends LeaseOnlyStoreFixture
 *         implements LeasePrimitiveContract<NoTransaction>, LeasedCallContract<NoTransaction> {
 *     protected IdempotencyStore<NoTransaction> createStore(InstantSource clock) { return new MyStore(server); }
 *     protected void reset() { server.flush(); }
 * }
 * }</pre>
 *
 * <p>Used by one test thread, as {@link StoreFixture}.
 */
public abstract class LeaseOnlyStoreFixture extends StoreFixture<NoTransaction> {

    /** For subclasses. */
    protected LeaseOnlyStoreFixture() {
    }

    /** @return {@link NoTransaction#NONE} */
    @Override
    protected final NoTransaction begin() {
        return NoTransaction.NONE;
    }

    /** Nothing to commit: each primitive took effect on its own. */
    @Override
    protected final void commit(NoTransaction tx) {
    }

    /** Nothing to roll back: the lease parts leave out what a rollback would check. */
    @Override
    protected final void rollback(NoTransaction tx) {
    }

    /** @return {@link NoTransaction#runner()} */
    @Override
    protected final TransactionRunner<NoTransaction> transactions() {
        return NoTransaction.runner();
    }
}
