package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.fake.FakeStore;
import dev.idempotency.fake.FakeTx;
import org.junit.jupiter.api.Test;

/** The listener is given once, to the engine, which hands it to its store ({@code IdempotencyStore.heardBy}). */
class EngineHandsItsListenerToTheStoreTest {

    private final FakeStore store = new FakeStore();

    @Test
    void theEngineHandsItsListenerToItsStoreAndKeepsTheStoreReturned() {
        IdempotencyListener listener = new IdempotencyListener() {
        };
        Idempotency<FakeTx> engine = Idempotency.builder(store).listener(listener).build();
        assertThat(store.heardBy).isSameAs(listener);
        assertThat(engine.store()).isSameAs(store);
    }

    @Test
    void anEngineWithoutAListenerHandsItsStoreTheListenerThatDoesNothing() {
        Idempotency.of(store);
        assertThat(store.heardBy).isSameAs(IdempotencyListener.NONE);
    }
}
