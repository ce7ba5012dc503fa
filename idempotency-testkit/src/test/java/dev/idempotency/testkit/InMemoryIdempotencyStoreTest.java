package dev.idempotency.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.TransactionRequiredException;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.TxSavepoint;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.LeasedCompletion;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.RecoveryPoint;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * What the reference store promises beyond the contract: its own transactions (ended ones refused by
 * every method, with the state named), its record count, an interrupted wait, a purge that sees its
 * transaction's own writes, and a savepoint that restores an earlier write.
 */
class InMemoryIdempotencyStoreTest {

    private static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");
    private static final IdempotencyKey KEY = IdempotencyKey.of("orders", "k1");
    private static final Fingerprint A = Fingerprint.of("A");
    private static final String TOKEN = "0123456789abcdef0123456789abcdef";

    private final TestClock clock = new TestClock(NOW);
    private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(clock);

    private static ClaimRequest claimUntil(Instant expiresAt, Duration lockTimeout) {
        return new ClaimRequest(KEY, A, NOW, expiresAt, lockTimeout);
    }

    private static Completion completion() {
        return new Completion(KEY, RecordStatus.COMPLETED, "string", "r".getBytes(StandardCharsets.UTF_8), NOW, NOW.plusSeconds(60));
    }

    @Test
    void anEndedTransactionIsRefusedByEveryMethodNamingItsState() {
        InMemoryIdempotencyStore.Transaction tx = store.begin();
        assertThat(tx.isOpen()).isTrue();
        TxSavepoint savepoint = store.savepoint(tx);
        store.commit(tx);
        assertThat(tx.isOpen()).isFalse();
        assertThat(tx).hasToString(tx.toString().replace(" (committed)", "") + " (committed)");
        LeaseRequest lease = new LeaseRequest(KEY, A, TOKEN, Duration.ofMinutes(1), Duration.ofHours(1), Duration.ofSeconds(1));
        Consumer<InMemoryIdempotencyStore.Transaction>[] uses = uses(lease);
        for (Consumer<InMemoryIdempotencyStore.Transaction> use : uses) {
            assertThatThrownBy(() -> use.accept(tx)).isInstanceOf(IllegalStateException.class).hasMessageContaining("already committed");
        }
        assertThatThrownBy(savepoint::rollback).isInstanceOf(IllegalStateException.class).hasMessageContaining("already committed");
        assertThatThrownBy(() -> store.checkTransaction(tx, KEY)).isInstanceOf(TransactionRequiredException.class)
                .hasMessageContaining("already committed");

        InMemoryIdempotencyStore.Transaction rolledBack = store.begin();
        store.rollback(rolledBack);
        assertThatThrownBy(() -> store.rollback(rolledBack)).isInstanceOf(IllegalStateException.class).hasMessageContaining("already rolled back");
    }

    @SuppressWarnings("unchecked")
    private Consumer<InMemoryIdempotencyStore.Transaction>[] uses(LeaseRequest lease) {
        return new Consumer[] {
            (Consumer<InMemoryIdempotencyStore.Transaction>) store::commit,
            (Consumer<InMemoryIdempotencyStore.Transaction>) store::rollback,
            (Consumer<InMemoryIdempotencyStore.Transaction>) t -> store.claim(t, claimUntil(NOW.plusSeconds(60), Duration.ofSeconds(1))),
            (Consumer<InMemoryIdempotencyStore.Transaction>) t -> store.complete(t, completion()),
            (Consumer<InMemoryIdempotencyStore.Transaction>) t -> store.release(t, KEY),
            (Consumer<InMemoryIdempotencyStore.Transaction>) store::savepoint,
            (Consumer<InMemoryIdempotencyStore.Transaction>) t -> store.purgeExpired(t, NOW, 10),
            (Consumer<InMemoryIdempotencyStore.Transaction>) t -> store.claimLease(t, lease),
            (Consumer<InMemoryIdempotencyStore.Transaction>) t -> store.releaseLease(t, KEY, TOKEN),
        };
    }

    @Test
    void aTransactionOfAnotherStoreIsRefused() {
        InMemoryIdempotencyStore other = new InMemoryIdempotencyStore(clock);
        InMemoryIdempotencyStore.Transaction foreign = other.begin();
        assertThatThrownBy(() -> store.commit(foreign)).isInstanceOf(IllegalStateException.class).hasMessageContaining("another store");
        assertThatThrownBy(() -> store.checkTransaction(foreign, KEY)).isInstanceOf(TransactionRequiredException.class)
                .hasMessageContaining("another store");
        assertThat(foreign.isOpen()).isTrue();
        other.rollback(foreign);
    }

    @Test
    void nullArgumentsAreRefusedByName() {
        InMemoryIdempotencyStore.Transaction tx = store.begin();
        assertThatThrownBy(() -> store.purgeExpired(tx, null, 10)).isInstanceOf(NullPointerException.class).hasMessage("now");
        assertThatThrownBy(() -> store.releaseLease(tx, null, TOKEN)).isInstanceOf(NullPointerException.class).hasMessage("key");
        assertThatThrownBy(() -> store.releaseLease(tx, KEY, null)).isInstanceOf(NullPointerException.class).hasMessage("ownerToken");
        assertThatThrownBy(() -> store.commit(null)).isInstanceOf(NullPointerException.class).hasMessage("tx");
        store.rollback(tx);
    }

    @Test
    void sizeCountsCommittedRecordsExpiredOnesIncluded() {
        assertThat(store.size()).isZero();
        InMemoryIdempotencyStore.Transaction tx = store.begin();
        assertThat(store.claim(tx, claimUntil(NOW.plusMillis(1), Duration.ofSeconds(1)))).isSameAs(Claim.acquired());
        assertThat(store.size()).as("an uncommitted record is not counted").isZero();
        store.commit(tx);
        clock.advance(Duration.ofHours(1));
        assertThat(store.size()).isEqualTo(1);
        assertThat(store).hasToString("InMemoryIdempotencyStore[1 records]");
    }

    /**
     * Every method gives the store's lock back: another thread can use the store after each one (a
     * method that kept it would leave that thread waiting for ever).
     */
    @Test
    void anotherThreadCanUseTheStoreAfterEachMethod() throws Exception {
        LeaseRequest lease = new LeaseRequest(KEY, A, TOKEN, Duration.ofMinutes(1), Duration.ofHours(1), Duration.ofSeconds(1));
        InMemoryIdempotencyStore.Transaction tx = store.begin();
        List<Runnable> methods = List.of(store::size, () -> store.checkTransaction(tx, KEY),
                () -> store.claim(tx, claimUntil(NOW.plusSeconds(60), Duration.ofSeconds(1))), () -> store.release(tx, KEY),
                () -> store.claim(tx, claimUntil(NOW.plusSeconds(60), Duration.ofSeconds(1))), () -> {
                    TxSavepoint savepoint = store.savepoint(tx);
                    store.complete(tx, completion());
                    savepoint.rollback();
                }, () -> store.complete(tx, completion()), () -> store.purgeExpired(tx, NOW, 10),
                () -> store.claimLease(tx, new LeaseRequest(IdempotencyKey.of("orders", "leased"), A, TOKEN, lease.lease(),
                        lease.retention(), lease.lockTimeout())),
                () -> store.extendLease(tx, IdempotencyKey.of("orders", "leased"), TOKEN, Duration.ofMinutes(2)),
                () -> store.checkpoint(tx, IdempotencyKey.of("orders", "leased"), TOKEN, new RecoveryPoint("string", new byte[] {1})),
                () -> store.completeLeased(tx, TOKEN, new LeasedCompletion(IdempotencyKey.of("orders", "leased"), RecordStatus.COMPLETED,
                        "string", new byte[] {2}, Duration.ofHours(1))),
                () -> store.releaseLease(tx, IdempotencyKey.of("orders", "leased"), TOKEN), () -> store.commit(tx),
                () -> store.transactions().inTransaction(t -> store.claimLease(t, lease)), () -> {
                    InMemoryIdempotencyStore.Transaction rolledBack = store.begin();
                    store.rollback(rolledBack);
                });
        for (int i = 0; i < methods.size(); i++) {
            methods.get(i).run();
            assertThat(CompletableFuture.supplyAsync(store::size).get(30, java.util.concurrent.TimeUnit.SECONDS))
                    .as("the store's size, read by another thread after method %d", i + 1).isNotNegative();
        }
    }

    @Test
    void aPurgeSeesItsOwnTransactionsExpiredRecord() {
        InMemoryIdempotencyStore.Transaction tx = store.begin();
        store.claim(tx, claimUntil(NOW.plusMillis(1), Duration.ofSeconds(1)));
        assertThat(store.purgeExpired(tx, NOW, 10)).isZero();
        assertThat(store.purgeExpired(tx, NOW.plusMillis(1), 10)).isEqualTo(1);
        assertThat(store.claim(tx, claimUntil(NOW.plusSeconds(60), Duration.ofSeconds(1)))).isSameAs(Claim.acquired());
        store.rollback(tx);
    }

    @Test
    void aSavepointRestoresTheWriteItFollowed() {
        InMemoryIdempotencyStore.Transaction tx = store.begin();
        store.claim(tx, claimUntil(NOW.plusSeconds(60), Duration.ofSeconds(1)));
        TxSavepoint savepoint = store.savepoint(tx);
        store.complete(tx, completion());
        savepoint.rollback();
        savepoint.release();
        Claim own = store.claim(tx, claimUntil(NOW.plusSeconds(60), Duration.ofSeconds(1)));
        assertThat(own).isInstanceOfSatisfying(Claim.Existing.class,
                e -> assertThat(e.record().status()).as("the claim, as before the completion").isEqualTo(RecordStatus.IN_PROGRESS));
        store.commit(tx);
        assertThat(store.size()).isEqualTo(1);
    }

    @Test
    void anInterruptedWaitForTheKeyFailsAndKeepsTheInterrupt() throws Exception {
        InMemoryIdempotencyStore.Transaction holder = store.begin();
        store.claim(holder, claimUntil(NOW.plusSeconds(60), Duration.ofSeconds(1)));
        AtomicReference<Boolean> interruptKept = new AtomicReference<>();
        CompletableFuture<Throwable> waiter = CompletableFuture.supplyAsync(() -> {
            Thread.currentThread().interrupt();
            InMemoryIdempotencyStore.Transaction tx = store.begin();
            try {
                store.claim(tx, claimUntil(NOW.plusSeconds(60), Duration.ofMinutes(5)));
                return null;
            } catch (RuntimeException e) {
                interruptKept.set(Thread.interrupted());
                return e;
            } finally {
                store.rollback(tx);
            }
        });
        assertThat(waiter.get()).isInstanceOf(IdempotencyStoreException.class).hasMessageContaining("interrupted");
        assertThat(interruptKept.get()).isTrue();
        store.rollback(holder);
    }
}
