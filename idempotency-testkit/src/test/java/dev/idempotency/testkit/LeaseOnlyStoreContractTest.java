package dev.idempotency.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.LeasedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.ResultCodec;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.LeaseOnlyStore;
import dev.idempotency.spi.NoTransaction;
import dev.idempotency.spi.TransactionalStore;
import java.time.InstantSource;
import org.junit.jupiter.api.Test;

/**
 * A store without transactions takes the lease tier of the contract, and lease mode runs on it
 * through an engine of its own; it is no transactional store, so no transactional mode takes it.
 */
class LeaseOnlyStoreContractTest extends LeaseOnlyStoreFixture
        implements LeasePrimitiveContract<NoTransaction>, LeasedCallContract<NoTransaction> {

    private final InMemoryIdempotencyStore inner = new InMemoryIdempotencyStore(clock());

    @Override
    protected IdempotencyStore<NoTransaction> createStore(InstantSource clock) {
        return new LeaseOnlyInMemoryStore(inner);
    }

    @Test
    void leaseModeRunsOnItsOwnEngine() {
        LeaseOnlyStore store = new LeaseOnlyInMemoryStore(inner);
        LeasedIdempotency<NoTransaction> leased = LeasedIdempotency.of(store);
        IdempotencyKey key = IdempotencyKey.of("lease-only", "leased");
        Outcome<String> first = leased.lease(IdempotentCall.of(key, ResultCodec.string()), attempt -> "leased");
        assertThat(first.status()).isEqualTo(Outcome.Status.EXECUTED);
        Outcome<String> again = leased.lease(IdempotentCall.of(key, ResultCodec.string()), attempt -> "run again");
        assertThat(again.status()).isEqualTo(Outcome.Status.REPLAYED);
        assertThat(TransactionalStore.class.isInstance(store)).as("a lease-only store has no transactional primitive").isFalse();
    }
}
