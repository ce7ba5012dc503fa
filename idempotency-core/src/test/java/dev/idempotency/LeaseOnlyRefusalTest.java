package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeaseOnlyStore;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.LeasedCompletion;
import dev.idempotency.spi.NoTransaction;
import dev.idempotency.spi.RecoveryPoint;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The modes that record a key in a transaction with the work refuse an engine over a store that
 * keeps leases only, by name and before the store or the work is reached; the key is validated
 * first.
 */
class LeaseOnlyRefusalTest {

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
    private final Idempotency<NoTransaction> engine = Idempotency.of(store);
    private final ManagedIdempotency<NoTransaction> managed = ManagedIdempotency.of(engine, NoTransaction.runner());
    private final IdempotencyKey key = IdempotencyKey.of("orders", "o-1");
    private final AtomicInteger runs = new AtomicInteger();

    @Test
    void executeInTheCallersTransactionIsRefused() {
        assertThatThrownBy(() -> engine.execute(key, NoTransaction.NONE, () -> "run " + runs.incrementAndGet()))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessage("key orders/o-1: Idempotency.execute records the key in the caller's transaction, but the store Unreached"
                        + " keeps leases only: it cannot share a transaction with the work. Run the call in lease mode instead"
                        + " (ManagedIdempotency.lease or run, over NoTransaction.runner()). Nothing was read or written");
        assertNothingRan();
    }

    @Test
    void aChunkInTheCallersTransactionIsRefused() {
        assertThatThrownBy(() -> engine.executeChunk(NoTransaction.NONE, List.of("a", "b"),
                item -> IdempotentCall.of(IdempotencyKey.of("orders", item), ResultCodec.string()), item -> "run " + runs.incrementAndGet()))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageStartingWith("Idempotency.executeChunk records the chunk's keys in the caller's transaction, but the store"
                        + " Unreached keeps leases only");
        assertNothingRan();
    }

    @Test
    void theLibrarysOwnTransactionalModesAreRefused() {
        assertThatThrownBy(() -> managed.execute(key, tx -> "run " + runs.incrementAndGet()))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageStartingWith("key orders/o-1: ManagedIdempotency.execute records the key in a transaction with the work");
        assertThatThrownBy(() -> managed.writeLast(key, tx -> "run " + runs.incrementAndGet()))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageStartingWith("key orders/o-1: ManagedIdempotency.writeLast writes the record in the work's own transaction");
        assertThatThrownBy(() -> managed.executeChunk(List.of("a"), item -> IdempotentCall.of(IdempotencyKey.of("orders", item),
                ResultCodec.string()), (tx, item) -> "run " + runs.incrementAndGet()))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageStartingWith("ManagedIdempotency.executeChunk records the chunk's keys in a transaction with the work");
        assertNothingRan();
    }

    @Test
    void anInvalidKeyIsRefusedAsInvalidFirst() {
        assertThatThrownBy(() -> engine.execute(IdempotencyKey.of("orders", "x".repeat(10_000)), NoTransaction.NONE, () -> "run"))
                .isInstanceOf(InvalidKeyException.class);
    }

    @Test
    void leaseModeReachesTheStore() {
        assertThat(managed.supportsLeases()).isTrue();
        assertThatThrownBy(() -> managed.lease(key, attempt -> "run")).isInstanceOf(AssertionError.class)
                .hasMessage("claimLease reached");
        assertThat(store.calls.get()).isEqualTo(1);
    }

    @Test
    void theRunnerRunsWithNoTransactionAndPurgingRemovesNothing() {
        NoTransaction given = NoTransaction.runner().<NoTransaction, RuntimeException>inTransaction(tx -> tx);
        assertThat(given).isSameAs(NoTransaction.NONE);
        assertThat(engine.purgeExpired(NoTransaction.NONE, 10)).isZero();
    }

    private void assertNothingRan() {
        assertThat(runs.get()).as("works run").isZero();
        assertThat(store.calls.get()).as("store calls").isZero();
    }
}
