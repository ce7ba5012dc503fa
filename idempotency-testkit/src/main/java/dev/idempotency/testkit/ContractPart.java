package dev.idempotency.testkit;

/**
 * A part of the store contract: a JUnit 5 test interface whose default {@code @Test} methods run
 * on the one {@link StoreFixture} of the test class. A test class extends {@link StoreFixture} (or
 * {@link IdempotencyStoreContract}, which implements every part) and implements the parts its
 * store supports; {@link StoreFixture} answers {@link #fixture()}.
 *
 * @param <C> the store's transaction type
 */
public interface ContractPart<C> {

    /** @return the fixture the part's tests run on: the test instance itself */
    StoreFixture<C> fixture();
}
