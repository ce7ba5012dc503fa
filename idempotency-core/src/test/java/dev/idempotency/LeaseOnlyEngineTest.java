package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeaseOnlyStore;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.LeasedCompletion;
import dev.idempotency.spi.NoTransaction;
import dev.idempotency.spi.RecoveryPoint;
import dev.idempotency.spi.TransactionalStore;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A store that keeps leases only has an engine of its own, {@link LeasedIdempotency}, with no
 * transactional mode to refuse: the key is validated first, and lease mode reaches the store.
 */
class LeaseOnlyEngineTest {

    /** A lease-only store that no test here may reach. */
    private static final class Unreached implements LeaseOnlyStore {
        final AtomicInteger calls = new AtomicInteger();

        @Override
        public LeaseClaim claimLease(NoTransaction tx, LeaseRequest request) {
            calls.incrementAndGet();
            throw new AssertionError("claimLease reached");
        }

        @Override
        public Optional<Instant> extendLease(NoTransaction tx, IdempotencyKey key, String ownerToken, Duration lease) {
            throw new AssertionError("extendLease reached");
        }

        @Override
        public boolean checkpoint(NoTransaction tx, IdempotencyKey key, String ownerToken, RecoveryPoint point) {
            throw new AssertionError("checkpoint reached");
        }

        @Override
        public Optional<Instant> completeLeased(NoTransaction tx, String ownerToken, LeasedCompletion completion) {
            throw new AssertionError("completeLeased reached");
        }

        @Override
        public boolean releaseLease(NoTransaction tx, IdempotencyKey key, String ownerToken) {
            throw new AssertionError("releaseLease reached");
        }

        @Override
        public String toString() {
            return "Unreached";
        }
    }

    private final Unreached store = new Unreached();
    private final LeasedIdempotency<NoTransaction> leased = LeasedIdempotency.of(store);
    private final IdempotencyKey key = IdempotencyKey.of("orders", "o-1");

    @Test
    void aLeaseOnlyStoreIsNoTransactionalStore() {
        // The transactional engines take a TransactionalStore: a lease-only store does not compile there
        // (StoreCapabilityCompileTest in idempotency-examples compiles the attempt), so none of them can refuse it at run time.
        assertThat(TransactionalStore.class.isAssignableFrom(LeaseOnlyStore.class)).isFalse();
        assertThat(LeasedIdempotency.class.getMethods()).extracting(java.lang.reflect.Method::getName)
                .doesNotContain("execute", "executeChunk", "writeLast");
    }

    @Test
    void anInvalidKeyIsRefusedAsInvalidFirst() {
        assertThatThrownBy(() -> leased.lease(IdempotencyKey.of("orders", "x".repeat(10_000)), attempt -> "run"))
                .isInstanceOf(InvalidKeyException.class);
        assertThat(store.calls.get()).as("store calls").isZero();
    }

    @Test
    void leaseModeReachesTheStore() {
        assertThat(leased).isNotInstanceOf(RecoveringLeasedIdempotency.class);
        assertThatThrownBy(() -> leased.lease(key, attempt -> "run")).isInstanceOf(AssertionError.class)
                .hasMessage("claimLease reached");
        assertThat(store.calls.get()).isEqualTo(1);
    }

    @Test
    void theRunnerRunsWithNoTransactionAndPurgingRemovesNothing() {
        NoTransaction given = NoTransaction.runner().<NoTransaction, RuntimeException>inTransaction(tx -> tx);
        assertThat(given).isSameAs(NoTransaction.NONE);
        assertThat(leased.transactions()).isSameAs(NoTransaction.runner());
        assertThat(store.purgeExpired(NoTransaction.NONE, Instant.now(), 10)).isZero();
    }
}
