package dev.idempotency.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.ResultCodec;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.LeaseOnlyStore;
import dev.idempotency.spi.NoTransaction;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A store without transactions takes the lease tier of the contract, and the modes that record a
 * key inside a transaction with the work refuse it by name before anything runs.
 */
class LeaseOnlyStoreContractTest extends LeaseOnlyStoreFixture
        implements LeasePrimitiveContract<NoTransaction>, LeasedCallContract<NoTransaction> {

    private final InMemoryIdempotencyStore inner = new InMemoryIdempotencyStore(clock());

    @Override
    protected IdempotencyStore<NoTransaction> createStore(InstantSource clock) {
        return new LeaseOnlyInMemoryStore(inner);
    }

    @Test
    void everyTransactionalEntryPointRefusesTheStoreBeforeTheWorkRuns() {
        LeaseOnlyStore store = new LeaseOnlyInMemoryStore(inner);
        Idempotency<NoTransaction> engine = Idempotency.of(store);
        ManagedIdempotency<NoTransaction> managed = ManagedIdempotency.of(engine, NoTransaction.runner());
        IdempotencyKey key = IdempotencyKey.of("lease-only", "refused");
        AtomicInteger runs = new AtomicInteger();
        List<Refused> entries = List.of(
                new Refused("Idempotency.execute", () -> engine.execute(key, NoTransaction.NONE, () -> "run " + runs.incrementAndGet())),
                new Refused("Idempotency.executeChunk", () -> engine.executeChunk(NoTransaction.NONE, List.of("a"),
                        item -> IdempotentCall.of(IdempotencyKey.of("lease-only", item), ResultCodec.string()), item -> "run " + runs.incrementAndGet())),
                new Refused("ManagedIdempotency.execute", () -> managed.execute(key, tx -> "run " + runs.incrementAndGet())),
                new Refused("ManagedIdempotency.writeLast", () -> managed.writeLast(key, tx -> "run " + runs.incrementAndGet())),
                new Refused("ManagedIdempotency.executeChunk", () -> managed.executeChunk(List.of("a"),
                        item -> IdempotentCall.of(IdempotencyKey.of("lease-only", item), ResultCodec.string()), (tx, item) -> "run " + runs.incrementAndGet())));
        for (Refused entry : entries) {
            assertThatThrownBy(entry.call::run).as(entry.name).isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining(entry.name).hasMessageContaining("keeps leases only")
                    .hasMessageContaining("ManagedIdempotency.lease or run").hasMessageContaining("Nothing was read or written");
        }
        assertThat(runs.get()).as("works run").isZero();
        assertThat(inner.size()).as("records written").isZero();
        assertThat(managed.supportsLeases()).isTrue();
        Outcome<String> leased = managed.lease(IdempotentCall.of(key, ResultCodec.string()), attempt -> "leased");
        assertThat(leased.status()).isEqualTo(Outcome.Status.EXECUTED);
    }

    @Test
    void theTransactionalPrimitivesRefuseWhoeverCallsThem() {
        LeaseOnlyStore store = new LeaseOnlyInMemoryStore(inner);
        IdempotencyKey key = IdempotencyKey.of("lease-only", "primitive");
        assertThatThrownBy(() -> store.checkTransaction(NoTransaction.NONE, key)).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("keeps leases only").hasMessageContaining("no transactional claim");
        assertThatThrownBy(() -> store.release(NoTransaction.NONE, key)).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> store.savepoint(NoTransaction.NONE)).isInstanceOf(UnsupportedOperationException.class);
    }

    private record Refused(String name, ThrowingRunnable call) {
    }
}
