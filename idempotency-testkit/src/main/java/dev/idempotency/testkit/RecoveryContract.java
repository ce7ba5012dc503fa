package dev.idempotency.testkit;

import static dev.idempotency.testkit.StoreFixture.A;
import static dev.idempotency.testkit.StoreFixture.LIVE_LEASE;
import static dev.idempotency.testkit.StoreFixture.RETENTION;
import static dev.idempotency.testkit.StoreFixture.bytes;
import static dev.idempotency.testkit.StoreFixture.catchThrowable;
import static dev.idempotency.testkit.StoreFixture.point;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.NamedPhases;
import dev.idempotency.Outcome;
import dev.idempotency.Phases;
import dev.idempotency.RecoveringLeasedIdempotency;
import dev.idempotency.RecoveryWorker;
import dev.idempotency.ResultCodec;
import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeasedCompletion;
import dev.idempotency.spi.PendingOperation;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.RecoveringStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The named operations of a {@link RecoveringStore} (section 4.8 of docs/contract.md), which the
 * {@link RecoveryWorker} reads: {@code Contract 4.8 (named operations listed)}, {@code Contract 4.8
 * (pages)}, and the worker over the store, {@code Contract 4.8 (recovery worker)}. Each test uses
 * scopes of its own and looks only at them, so a store may keep other entries.
 *
 * <p>Implement it only for a {@code RecoveringStore}: for another store its tests fail (under
 * {@link IdempotencyStoreContract} they are skipped).
 *
 * @param <C> the store's transaction type
 */
public interface RecoveryContract<C> extends ContractPart<C> {

    /**
     * Contract 4.8 (docs/contract.md): an operation enlisted in its claim's transaction is listed
     * with its record's state, in progress and then with its outcome, until it is delisted.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void aNamedOperationIsListedWithItsRecordUntilDelisted() throws Exception {
        StoreFixture<C> f = fixture();
        RecoveringStore<C> s = f.recovering();
        Promise p = Promise.PENDING_LISTED;
        IdempotencyKey key = IdempotencyKey.of("named-listed", "k");
        LeaseClaim claim = f.committed(tx -> {
            LeaseClaim c = s.claimLease(tx, StoreFixture.request(key, A, "t1", LIVE_LEASE));
            assertThat(s.checkpoint(tx, key, "t1", point("prepared"))).as(p.broken("The claim's checkpoint was refused")).isTrue();
            assertThat(s.enlist(tx, key, "t1", "charge")).as(p.broken("The claim's own enlist was refused")).isTrue();
            return c;
        });
        assertThat(claim).isInstanceOf(LeaseClaim.Acquired.class);
        PendingOperation live = only(p, f, s, "named-listed");
        assertThat(live.key()).as(p.broken("The entry's key")).isEqualTo(key);
        assertThat(live.operation()).as(p.broken("The entry's operation")).isEqualTo("charge");
        assertThat(live.status()).as(p.broken("The entry's status")).isEqualTo(RecordStatus.IN_PROGRESS);
        assertThat(live.fingerprint()).as(p.broken("The entry's fingerprint")).isEqualTo(A);
        assertThat(live.attempts()).as(p.broken("The entry's attempts")).isEqualTo(1);
        assertThat(live.abandoned()).as(p.broken("A live lease was listed as abandoned")).isFalse();
        assertThat(f.changed(tx -> s.releaseLease(tx, key, "t1"))).isTrue();
        assertThat(only(p, f, s, "named-listed").abandoned()).as(p.broken("A released lease was not listed as abandoned")).isTrue();
        assertThat(f.ended(tx -> s.completeLeased(tx, "t1", new LeasedCompletion(key, RecordStatus.COMPLETED, "contract-codec",
                bytes("done"), RETENTION)))).isPresent();
        PendingOperation settled = only(p, f, s, "named-listed");
        assertThat(settled.status()).as(p.broken("A completed operation's entry")).isEqualTo(RecordStatus.COMPLETED);
        assertThat(settled.settled()).isTrue();
        f.committed(tx -> {
            s.delist(tx, key);
            return null;
        });
        assertThat(listed(f, s, "named-listed")).as(p.broken("A delisted operation is still listed")).isEmpty();
        f.committed(tx -> {
            s.delist(tx, key);
            return null;
        }); // delisting what is not listed does nothing
    }

    /**
     * Contract 4.8 (docs/contract.md): an enlist is fenced by the owner token, and one whose
     * transaction rolls back leaves nothing.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void anEnlistIsFencedAndRollsBackWithItsTransaction() throws Exception {
        StoreFixture<C> f = fixture();
        RecoveringStore<C> s = f.recovering();
        Promise p = Promise.PENDING_LISTED;
        IdempotencyKey key = IdempotencyKey.of("named-fenced", "k");
        f.claimLease(key, A, "t1", LIVE_LEASE, true, point("prepared"));
        assertThat(f.changed(tx -> s.enlist(tx, key, "another-token", "charge")))
                .as(p.broken("An enlist with a token that does not hold the record was accepted")).isFalse();
        assertThat(f.changed(tx -> s.enlist(tx, IdempotencyKey.of("named-fenced", "no-record"), "t1", "charge")))
                .as(p.broken("An enlist of a key without a record was accepted")).isFalse();
        C tx = f.open();
        assertThat(s.enlist(tx, key, "t1", "charge")).isTrue();
        f.rollback(tx);
        assertThat(listed(f, s, "named-fenced")).as(p.broken("A rolled-back or refused enlist is listed")).isEmpty();
    }

    /**
     * Contract 4.8 (docs/contract.md): pages list every entry once, in key order.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void pagesListEveryEntryOnceInKeyOrder() throws Exception {
        StoreFixture<C> f = fixture();
        RecoveringStore<C> s = f.recovering();
        Promise p = Promise.PENDING_PAGES;
        List<IdempotencyKey> keys = new ArrayList<>();
        for (String scope : new String[] {"named-pages-b", "named-pages-a"}) {
            for (String id : new String[] {"k3", "k1", "k2", "k10"}) {
                IdempotencyKey key = IdempotencyKey.of(scope, id);
                keys.add(key);
                f.committed(tx -> {
                    s.claimLease(tx, StoreFixture.request(key, A, "t-" + key.id(), LIVE_LEASE));
                    return s.enlist(tx, key, "t-" + key.id(), "charge");
                });
            }
        }
        List<IdempotencyKey> seen = new ArrayList<>();
        IdempotencyKey after = null;
        for (int pages = 0; pages < 100; pages++) {
            IdempotencyKey from = after;
            List<PendingOperation> page = f.committed(tx -> s.pending(tx, from, 3));
            assertThat(page.size()).as(p.broken("A page is longer than its limit")).isLessThanOrEqualTo(3);
            page.stream().map(PendingOperation::key).filter(k -> k.scope().startsWith("named-pages-")).forEach(seen::add);
            if (page.size() < 3) {
                break;
            }
            after = page.get(page.size() - 1).key();
        }
        List<IdempotencyKey> expected = keys.stream().sorted((x, y) -> x.scope().equals(y.scope())
                ? x.id().compareTo(y.id()) : x.scope().compareTo(y.scope())).collect(Collectors.toList());
        assertThat(seen).as(p.broken("The entries across pages")).containsExactlyElementsOf(expected);
        f.committed(tx -> {
            keys.forEach(key -> s.delist(tx, key));
            return null;
        });
    }

    /**
     * Contract 4.8 (docs/contract.md): the recovery worker over the store resumes an operation
     * whose client went away, once, at its recovery point; the client that comes back gets the
     * result replayed.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void theRecoveryWorkerResumesAnAbandonedOperationOnce() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.RECOVERED;
        RecoveringLeasedIdempotency<C> managed = f.recoveringEngine(LIVE_LEASE);
        IdempotencyKey key = IdempotencyKey.of("named-worker", "k");
        AtomicInteger prepares = new AtomicInteger();
        AtomicInteger calls = new AtomicInteger();
        StoreFixture.PlainFailure timeout = new StoreFixture.PlainFailure("provider timed out");
        NamedPhases<C, String, Exception> failing = Phases.<C, String, Exception>prepare(tx -> "order-" + prepares.incrementAndGet(),
                ResultCodec.string()).<String>call((attempt, order) -> {
                    calls.incrementAndGet();
                    throw timeout;
                }).result(ResultCodec.string()).named("contract-charge");
        assertThat(catchThrowable(() -> managed.run(IdempotentCall.of(key, ResultCodec.string()).withFingerprint(A), failing)))
                .as(p.broken("The client's call did not fail as it should")).isSameAs(timeout);
        NamedPhases<C, String, Exception> resumed = Phases.<C, String, Exception>prepare(tx -> "never " + prepares.incrementAndGet(),
                ResultCodec.string()).call((attempt, order) -> {
                    calls.incrementAndGet();
                    return "charged " + order + " on attempt " + attempt.number();
                }).result(ResultCodec.string()).named("contract-charge");
        RecoveryWorker.Pass pass = RecoveryWorker.builder(managed).register(resumed).build().runOnce();
        assertThat(pass.resumed()).as(p.broken("The worker's pass: " + pass)).isEqualTo(1);
        assertThat(prepares.get()).as(p.broken("The prepare ran again")).isEqualTo(1);
        assertThat(calls.get()).as(p.broken("The calls: the client's and the worker's")).isEqualTo(2);
        Outcome<String> back = managed.run(IdempotentCall.of(key, ResultCodec.string()).withFingerprint(A), resumed);
        StoreFixture.assertOutcome(p, back, Outcome.Status.REPLAYED, "charged order-1 on attempt 2");
        assertThat(listed(f, s(f), "named-worker")).as(p.broken("The resumed operation is still listed")).isEmpty();
    }

    private static <C> RecoveringStore<C> s(StoreFixture<C> f) {
        return f.recovering();
    }

    /** The entries of the scopes that start with {@code scopePrefix}, all pages. */
    private static <C> List<PendingOperation> listed(StoreFixture<C> f, RecoveringStore<C> s, String scopePrefix) {
        List<PendingOperation> all = new ArrayList<>();
        IdempotencyKey after = null;
        while (true) {
            IdempotencyKey from = after;
            List<PendingOperation> page = f.committed(tx -> s.pending(tx, from, 100));
            page.stream().filter(e -> e.key().scope().startsWith(scopePrefix)).forEach(all::add);
            if (page.size() < 100) {
                return all;
            }
            after = page.get(page.size() - 1).key();
        }
    }

    private static <C> PendingOperation only(Promise p, StoreFixture<C> f, RecoveringStore<C> s, String scopePrefix) {
        List<PendingOperation> entries = listed(f, s, scopePrefix);
        assertThat(entries).as(p.broken("The entries listed")).hasSize(1);
        return entries.get(0);
    }
}
