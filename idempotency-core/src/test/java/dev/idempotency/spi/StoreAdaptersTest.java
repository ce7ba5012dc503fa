package dev.idempotency.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.TransactionRequiredException;
import dev.idempotency.fake.FakeStore;
import dev.idempotency.fake.FakeTx;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * {@link StoreAdapters}: every primitive reaches the store, with the transaction the adapter found
 * and the key it was shown; a refusal of the adapter reaches the caller before the store is called;
 * the store's shape (leasing or not) is kept.
 */
class StoreAdaptersTest {

    /** The caller's transaction: what the adapter is given. */
    record Outer(FakeTx tx, String name) {
    }

    private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");
    private static final Fingerprint FP = Fingerprint.of("request");
    private static final IdempotencyKey A = IdempotencyKey.of("s", "a");
    private static final IdempotencyKey B = IdempotencyKey.of("s", "b");

    private final FakeStore store = new FakeStore();
    /** What the adapter was asked, as "transaction:key". */
    private final List<String> asked = new ArrayList<>();
    private final TransactionAdapter<Outer, FakeTx> adapter = new TransactionAdapter<>() {
        @Override
        public FakeTx inner(Outer tx, IdempotencyKey key) {
            asked.add(tx.name() + ":" + (key == null ? "-" : key.id()));
            return tx.tx();
        }

        @Override
        public String toString() {
            return "Outer.tx()";
        }
    };
    private final TransactionalRecoveringStore<Outer> adapted = StoreAdapters.adapt(new Every(store), adapter);

    private static ClaimRequest claim(IdempotencyKey key) {
        return new ClaimRequest(key, FP, NOW, NOW.plus(Duration.ofDays(1)), Duration.ofSeconds(1));
    }

    private static Completion completion(IdempotencyKey key) {
        return new Completion(key, RecordStatus.COMPLETED, "string", new byte[] {1}, NOW, NOW.plus(Duration.ofDays(1)));
    }

    private static LeaseRequest lease(IdempotencyKey key) {
        return new LeaseRequest(key, FP, "token", Duration.ofMinutes(1), Duration.ofDays(1), Duration.ofSeconds(1));
    }

    private RecordStatus status(FakeTx tx, IdempotencyKey key) {
        return store.in(tx, key).map(StoredRecord::status).orElse(null);
    }

    @Test
    void everyPrimitiveOfTheStoreReachesItWithTheAdaptedTransaction() {
        Outer one = new Outer(store.begin(), "one");
        adapted.checkTransaction(one, A);
        assertThat(adapted.claim(one, claim(A))).isInstanceOf(Claim.Acquired.class);
        assertThat(status(one.tx(), A)).isEqualTo(RecordStatus.IN_PROGRESS);
        adapted.complete(one, completion(A));
        assertThat(status(one.tx(), A)).isEqualTo(RecordStatus.COMPLETED);
        assertThat(adapted.claim(one, claim(B))).isInstanceOf(Claim.Acquired.class);
        adapted.release(one, B);
        assertThat(status(one.tx(), B)).isNull();
        assertThat(store.calls).containsExactly("check:a", "claim:a", "complete:a", "claim:b", "release:b");
        assertThat(asked).containsExactly("one:a", "one:a", "one:a", "one:b", "one:b");

        asked.clear();
        Outer two = new Outer(store.begin(), "two");
        assertThat(adapted.claimAll(two, List.of(claim(A), claim(B)))).hasSize(2).allMatch(Claim.Acquired.class::isInstance);
        assertThat(store.claimAllRequests).containsExactly(List.of(claim(A), claim(B)));
        adapted.completeAll(two, List.of(completion(A), completion(B)));
        assertThat(status(two.tx(), A)).isEqualTo(RecordStatus.COMPLETED);
        assertThat(status(two.tx(), B)).isEqualTo(RecordStatus.COMPLETED);
        Outer three = new Outer(store.begin(), "three");
        assertThat(adapted.writeLast(three, claim(B), completion(B))).isInstanceOf(Claim.Acquired.class);
        assertThat(status(three.tx(), B)).isEqualTo(RecordStatus.COMPLETED);
        assertThat(store.defaultsCalled).containsExactly("completeAll:a", "writeLast:b");
        assertThat(adapted.claimAll(three, List.of())).isEmpty();
        assertThat(asked).containsExactly("two:a", "two:a", "three:b", "three:-");

        asked.clear();
        TxSavepoint savepoint = adapted.savepoint(two);
        two.tx().write("undone");
        savepoint.rollback();
        assertThat(two.tx().writes).isEmpty();
        assertThat(store.calls).endsWith("savepoint", "savepoint-rollback");
        assertThat(adapted.purgeExpired(two, NOW.plus(Duration.ofDays(2)), 1)).isEqualTo(1);
        assertThat(store.purgeLimits).containsExactly(1);
        assertThat(store.in(two.tx(), A).isPresent() ^ store.in(two.tx(), B).isPresent()).isTrue();
        assertThat(asked).containsExactly("two:-", "two:-");
    }

    @Test
    void everyLeasePrimitiveReachesTheStoreWithTheAdaptedTransaction() {
        Outer one = new Outer(store.begin(), "one");
        assertThat(adapted.claimLease(one, lease(A))).isInstanceOf(LeaseClaim.Acquired.class);
        assertThat(adapted.extendLease(one, A, "token", Duration.ofMinutes(5))).contains(store.storeNow.plus(Duration.ofMinutes(5)));
        RecoveryPoint point = new RecoveryPoint("string", new byte[] {7});
        assertThat(adapted.checkpoint(one, A, "token", point)).isTrue();
        assertThat(adapted.releaseLease(one, A, "token")).isTrue();
        assertThat(adapted.completeLeased(one, "token", new LeasedCompletion(A, RecordStatus.COMPLETED, "string", null,
                Duration.ofDays(1)))).contains(store.storeNow);
        assertThat(status(one.tx(), A)).isEqualTo(RecordStatus.COMPLETED);
        store.commit(one.tx());
        assertThat(store.committedPoint(A)).isEqualTo(point);
        assertThat(store.calls).containsExactly("claimLease:a", "extendLease:a", "checkpoint:a", "releaseLease:a", "completeLeased:a");
        assertThat(asked).containsExactly("one:a", "one:a", "one:a", "one:a", "one:a");

        Outer other = new Outer(store.begin(), "other"); // a token that holds nothing there: the store's answer comes back
        assertThat(adapted.extendLease(other, B, "token", Duration.ofMinutes(5))).isEmpty();
        assertThat(adapted.checkpoint(other, B, "token", point)).isFalse();
        assertThat(adapted.releaseLease(other, B, "token")).isFalse();
        assertThat(adapted.completeLeased(other, "token", new LeasedCompletion(B, RecordStatus.FAILED, "string", null,
                Duration.ofDays(1)))).isEmpty();
        assertThat(asked).endsWith("other:b", "other:b", "other:b", "other:b");
    }

    @Test
    void aRefusalOfTheAdapterReachesTheCallerBeforeTheStoreIsCalled() {
        TransactionRequiredException refusal = new TransactionRequiredException(A, "not in a transaction");
        TransactionalRecoveringStore<Outer> refusing = StoreAdapters.adapt(new Every(store), (tx, key) -> {
            throw refusal;
        });
        Outer tx = new Outer(store.begin(), "refused");
        List<Consumer<TransactionalRecoveringStore<Outer>>> primitives = List.of(
                s -> s.checkTransaction(tx, A),
                s -> s.claim(tx, claim(A)),
                s -> s.claimAll(tx, List.of(claim(A))),
                s -> s.complete(tx, completion(A)),
                s -> s.completeAll(tx, List.of(completion(A))),
                s -> s.writeLast(tx, claim(A), completion(A)),
                s -> s.release(tx, A),
                s -> s.savepoint(tx),
                s -> s.purgeExpired(tx, NOW, 10),
                s -> s.claimLease(tx, lease(A)),
                s -> s.extendLease(tx, A, "token", Duration.ofMinutes(1)),
                s -> s.checkpoint(tx, A, "token", new RecoveryPoint("string", null)),
                s -> s.completeLeased(tx, "token", new LeasedCompletion(A, RecordStatus.COMPLETED, "string", null, Duration.ofDays(1))),
                s -> s.releaseLease(tx, A, "token"));
        for (Consumer<TransactionalRecoveringStore<Outer>> primitive : primitives) {
            assertThatThrownBy(() -> primitive.accept(refusing)).isSameAs(refusal);
        }
        assertThat(store.calls).isEmpty();
        assertThat(store.claimAllRequests).isEmpty();
        assertThat(store.defaultsCalled).isEmpty();
        assertThat(store.purgeLimits).isEmpty();
        assertThat(store.in(tx.tx(), A)).isEmpty();
    }

    @Test
    void anAdapterThatFindsNoTransactionIsRefusedAsABug() {
        TransactionalRecoveringStore<Outer> none = StoreAdapters.adapt(new Every(store), (tx, key) -> null);
        assertThatThrownBy(() -> none.claim(new Outer(store.begin(), "x"), claim(A))).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("adapter");
        assertThatThrownBy(() -> adapted.claim(null, claim(A))).isInstanceOf(NullPointerException.class).hasMessageContaining("tx");
        assertThat(store.calls).isEmpty();
    }

    @Test
    void aStoreOfEveryCapabilityKeepsThemAndAStoreWithoutLeasesStaysWithout() {
        TransactionalStore<FakeTx> every = new Every(store);
        assertThat(StoreAdapters.adapt(every, adapter)).isInstanceOf(TransactionalRecoveringStore.class);
        TransactionalStore<Outer> notLeasing = StoreAdapters.adapt(new WithoutLeases(store), adapter);
        assertThat(notLeasing).isNotInstanceOf(LeasingStore.class);
        Outer tx = new Outer(store.begin(), "one");
        assertThat(notLeasing.claim(tx, claim(A))).isInstanceOf(Claim.Acquired.class);
        assertThat(status(tx.tx(), A)).isEqualTo(RecordStatus.IN_PROGRESS);
    }

    @Test
    @SuppressWarnings("unchecked")
    void aRecoveringStoreStaysRecoveringAndItsPrimitivesReachItWithTheAdaptedTransaction() {
        List<String> calls = new ArrayList<>();
        PendingOperation entry = new PendingOperation(A, "charge", RecordStatus.IN_PROGRESS, FP, 1, NOW, NOW);
        TransactionalRecoveringStore<FakeTx> recovering = (TransactionalRecoveringStore<FakeTx>) Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {TransactionalRecoveringStore.class}, (proxy, method, args) -> {
                    String tx = args != null && args[0] instanceof FakeTx ? "inner" : "?";
                    switch (method.getName()) {
                        case "enlist":
                            calls.add("enlist:" + tx + ":" + ((IdempotencyKey) args[1]).id() + ":" + args[2] + ":" + args[3]);
                            return args[1].equals(A); // the store's answer, whichever it is, comes back
                        case "delist":
                            calls.add("delist:" + tx + ":" + ((IdempotencyKey) args[1]).id());
                            return null;
                        case "pending":
                            calls.add("pending:" + tx + ":" + (args[1] == null ? "-" : ((IdempotencyKey) args[1]).id()) + ":" + args[2]);
                            return List.of(entry);
                        case "toString":
                            return "Recovering";
                        default:
                            throw new UnsupportedOperationException(method.getName());
                    }
                });
        TransactionalStore<Outer> adaptedStore = StoreAdapters.adapt((TransactionalStore<FakeTx>) recovering, adapter);
        assertThat(adaptedStore).isInstanceOf(RecoveringStore.class).hasToString("AdaptedRecoveringStore[Recovering through Outer.tx()]");
        RecoveringStore<Outer> adaptedRecovering = (RecoveringStore<Outer>) adaptedStore;
        Outer one = new Outer(store.begin(), "one");
        assertThat(adaptedRecovering.enlist(one, A, "token", "charge")).isTrue();
        assertThat(adaptedRecovering.enlist(one, B, "stale", "charge")).isFalse();
        adaptedRecovering.delist(one, B);
        assertThat(adaptedRecovering.pending(one, null, 10)).containsExactly(entry);
        assertThat(adaptedRecovering.pending(one, B, 5)).containsExactly(entry);
        assertThat(calls).containsExactly("enlist:inner:a:token:charge", "enlist:inner:b:stale:charge", "delist:inner:b",
                "pending:inner:-:10", "pending:inner:b:5");
        assertThat(asked).containsExactly("one:a", "one:b", "one:b", "one:-", "one:b");
    }

    @Test
    void itsNameSaysWhatItWrapsAndThroughWhat() {
        assertThat(adapted).hasToString("AdaptedRecoveringStore[Every through Outer.tx()]");
        assertThat(StoreAdapters.adapt(new WithoutLeases(store), adapter)).hasToString("AdaptedStore[WithoutLeases through Outer.tx()]");
    }

    @Test
    void theListenerReachesTheStoreAndAStoreThatReportsIsAdaptedInTurn() {
        IdempotencyListener listener = new IdempotencyListener() {
        };
        assertThat(adapted.heardBy(listener)).as("the store reports nothing of its own").isSameAs(adapted);
        assertThat(store.heardBy).isSameAs(listener);

        TransactionalStore<Outer> heard = StoreAdapters.adapt(new WithoutLeases(store), adapter).heardBy(listener);
        assertThat(heard).isNotInstanceOf(LeasingStore.class).hasToString("AdaptedStore[WithoutLeases heard through Outer.tx()]");
        Outer tx = new Outer(store.begin(), "one");
        assertThat(heard.claim(tx, claim(A))).isInstanceOf(Claim.Acquired.class);
        assertThat(asked).containsExactly("one:a");
        assertThat(status(tx.tx(), A)).isEqualTo(RecordStatus.IN_PROGRESS);
    }

    /** A store that keeps no leases: the fake's other primitives; heard by a listener, a copy that says so. */
    private static final class WithoutLeases implements TransactionalStore<FakeTx> {
        private final FakeStore store;
        private final String name;

        WithoutLeases(FakeStore store) {
            this(store, "WithoutLeases");
        }

        private WithoutLeases(FakeStore store, String name) {
            this.store = store;
            this.name = name;
        }

        @Override
        public TransactionalStore<FakeTx> heardBy(IdempotencyListener listener) {
            return new WithoutLeases(store, name + " heard");
        }

        @Override
        public void checkTransaction(FakeTx tx, IdempotencyKey key) {
            store.checkTransaction(tx, key);
        }

        @Override
        public Claim claim(FakeTx tx, ClaimRequest request) {
            return store.claim(tx, request);
        }

        @Override
        public void complete(FakeTx tx, Completion completion) {
            store.complete(tx, completion);
        }

        @Override
        public void release(FakeTx tx, IdempotencyKey key) {
            store.release(tx, key);
        }

        @Override
        public TxSavepoint savepoint(FakeTx tx) {
            return store.savepoint(tx);
        }

        @Override
        public int purgeExpired(FakeTx tx, Instant now, int limit) {
            return store.purgeExpired(tx, now, limit);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /** The fake with every capability: its primitives, and a list of named operations it does not keep. */
    private static final class Every implements TransactionalRecoveringStore<FakeTx> {
        private final FakeStore store;

        Every(FakeStore store) {
            this.store = store;
        }

        @Override
        public TransactionalRecoveringStore<FakeTx> heardBy(IdempotencyListener listener) {
            store.heardBy(listener);
            return this;
        }

        @Override
        public void checkTransaction(FakeTx tx, IdempotencyKey key) {
            store.checkTransaction(tx, key);
        }

        @Override
        public Claim claim(FakeTx tx, ClaimRequest request) {
            return store.claim(tx, request);
        }

        @Override
        public List<Claim> claimAll(FakeTx tx, List<ClaimRequest> requests) {
            return store.claimAll(tx, requests);
        }

        @Override
        public void complete(FakeTx tx, Completion completion) {
            store.complete(tx, completion);
        }

        @Override
        public void completeAll(FakeTx tx, List<Completion> completions) {
            store.completeAll(tx, completions);
        }

        @Override
        public Claim writeLast(FakeTx tx, ClaimRequest request, Completion completion) {
            return store.writeLast(tx, request, completion);
        }

        @Override
        public void release(FakeTx tx, IdempotencyKey key) {
            store.release(tx, key);
        }

        @Override
        public TxSavepoint savepoint(FakeTx tx) {
            return store.savepoint(tx);
        }

        @Override
        public int purgeExpired(FakeTx tx, Instant now, int limit) {
            return store.purgeExpired(tx, now, limit);
        }

        @Override
        public LeaseClaim claimLease(FakeTx tx, LeaseRequest request) {
            return store.claimLease(tx, request);
        }

        @Override
        public java.util.Optional<Instant> extendLease(FakeTx tx, IdempotencyKey key, String ownerToken, Duration lease) {
            return store.extendLease(tx, key, ownerToken, lease);
        }

        @Override
        public boolean checkpoint(FakeTx tx, IdempotencyKey key, String ownerToken, RecoveryPoint point) {
            return store.checkpoint(tx, key, ownerToken, point);
        }

        @Override
        public java.util.Optional<Instant> completeLeased(FakeTx tx, String ownerToken, LeasedCompletion completion) {
            return store.completeLeased(tx, ownerToken, completion);
        }

        @Override
        public boolean releaseLease(FakeTx tx, IdempotencyKey key, String ownerToken) {
            return store.releaseLease(tx, key, ownerToken);
        }

        @Override
        public boolean enlist(FakeTx tx, IdempotencyKey key, String ownerToken, String operation) {
            throw new UnsupportedOperationException("enlist");
        }

        @Override
        public void delist(FakeTx tx, IdempotencyKey key) {
            throw new UnsupportedOperationException("delist");
        }

        @Override
        public List<PendingOperation> pending(FakeTx tx, IdempotencyKey after, int limit) {
            throw new UnsupportedOperationException("pending");
        }

        @Override
        public String toString() {
            return "Every";
        }
    }
}
