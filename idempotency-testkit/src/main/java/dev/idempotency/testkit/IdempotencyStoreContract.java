package dev.idempotency.testkit;

import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.LeasingStore;

/**
 * The whole contract of docs/contract.md, for any {@link IdempotencyStore}: every part at once.
 * Extend it, answer the hooks of {@link StoreFixture}, and run it as a JUnit 5 test class.
 *
 * <pre>{@code
 * class MyStoreContractTest extends IdempotencyStoreContract<MyTx> {
 *     protected IdempotencyStore<MyTx> createStore(InstantSource clock) { return new MyStore(...); }
 *     protected MyTx begin() { return myDatabase.begin(); }
 *     protected void commit(MyTx tx) { tx.commit(); }
 *     protected void rollback(MyTx tx) { tx.rollback(); }
 * }
 * }</pre>
 *
 * <p>It implements {@link ExampleContract}, {@link ConcurrencyContract}, {@link StatefulContract},
 * {@link ChunkContract}, {@link WriteLastContract}, {@link LeasePrimitiveContract} and
 * {@link LeasedCallContract}. The tests of the two lease parts are skipped for a store that is not a
 * {@link LeasingStore}. To run only the parts a store supports, with nothing skipped, extend
 * {@link StoreFixture} instead and implement those parts.
 *
 * @param <C> the store's transaction type
 */
public abstract class IdempotencyStoreContract<C> extends StoreFixture<C>
        implements ExampleContract<C>, ConcurrencyContract<C>, StatefulContract<C>, ChunkContract<C>, WriteLastContract<C>,
        LeasePrimitiveContract<C>, LeasedCallContract<C>, RecoveryContract<C> {

    /** For subclasses. */
    protected IdempotencyStoreContract() {
    }

    /** Every part is here, whatever the store supports: a lease part's tests are skipped for a store without leases. */
    @Override
    final boolean skipsPartsTheStoreCannotTake() {
        return true;
    }
}
