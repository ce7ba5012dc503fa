package dev.idempotency.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.AbandonedClaimException;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.Outcome;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** A work that ends its caller's transaction itself, on the reference in-memory store. */
class AbandonedClaimTest {

    private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
    private final Idempotency<InMemoryIdempotencyStore.Transaction> idem = Idempotency.of(store);
    private final AtomicInteger runs = new AtomicInteger();

    @Test
    void aWorkThatCommitsItsTransactionIsRefusedWhenItReturnsAndEveryRetryIsRefusedByName() {
        IdempotencyKey key = IdempotencyKey.of("tenant", "commits-itself");
        refusedWhenTheWorkReturns(key, store::commit, "already committed");

        InMemoryIdempotencyStore.Transaction retry = store.begin();
        assertThatThrownBy(() -> idem.execute(key, retry, () -> {
            runs.incrementAndGet();
            return "again";
        })).isInstanceOf(AbandonedClaimException.class).hasMessageContaining("in progress");
        store.rollback(retry);
        assertThat(runs).hasValue(1);
    }

    @Test
    void aWorkThatRollsItsTransactionBackIsRefusedWhenItReturnsAndTheRetryRunsTheWork() {
        IdempotencyKey key = IdempotencyKey.of("tenant", "rolls-back-itself");
        refusedWhenTheWorkReturns(key, store::rollback, "already rolled back"); // nothing of the attempt survives

        InMemoryIdempotencyStore.Transaction retry = store.begin();
        Outcome<String> outcome = idem.execute(key, retry, () -> "run " + runs.incrementAndGet());
        store.commit(retry);
        assertThat(outcome).isEqualTo(new Outcome.Executed<>(key, "run 2"));
    }

    /** Runs a work that ends its own transaction (against the rule), and expects the refusal. */
    private void refusedWhenTheWorkReturns(IdempotencyKey key, Consumer<InMemoryIdempotencyStore.Transaction> end, String why) {
        InMemoryIdempotencyStore.Transaction tx = store.begin();
        assertThatThrownBy(() -> idem.execute(key, tx, () -> {
            runs.incrementAndGet();
            end.accept(tx);
            return "v";
        })).isInstanceOf(AbandonedClaimException.class).hasMessageContaining("could no longer carry the result")
                .satisfies(e -> assertThat(e.getCause()).hasMessageContaining(why));
    }
}
