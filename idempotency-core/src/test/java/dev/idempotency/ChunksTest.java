package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.fake.FakeStore;
import dev.idempotency.fake.FakeTx;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.StoredRecord;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

class ChunksTest {

    static final Instant T0 = Instant.parse("2026-01-01T10:00:00.123Z");

    final FakeStore store = new FakeStore();
    final Function<String, IdempotencyKey> keyOf = s -> IdempotencyKey.of(s.substring(0, 1), s.substring(1));
    final Function<String, IdempotentCall<String>> callOf = s -> IdempotentCall.of(keyOf.apply(s), ResultCodec.string());

    Idempotency<FakeTx> engine(KeyPolicy policy) {
        return Idempotency.builder(store).keyPolicy(policy).clock(() -> T0).build();
    }

    @Test
    void keysAreClaimedSortedByScopeThenIdAndOutcomesComeInInputOrder() {
        FakeTx tx = store.begin();
        List<String> ran = new ArrayList<>();
        List<Outcome<String>> outcomes = engine(KeyPolicy.ofDefaults()).executeChunk(tx, List.of("b1", "a2", "a1", "c0"), callOf, item -> {
                    ran.add(item);
                    return item.toUpperCase();
                });
        assertThat(store.claimAllRequests).hasSize(1);
        assertThat(store.claimAllRequests.get(0)).extracting(ClaimRequest::key)
                .containsExactly(keyOf.apply("a1"), keyOf.apply("a2"), keyOf.apply("b1"), keyOf.apply("c0"));
        assertThat(ran).containsExactly("b1", "a2", "a1", "c0");
        assertThat(outcomes).extracting(Outcome::value).containsExactly("B1", "A2", "A1", "C0");
        assertThat(store.in(tx, keyOf.apply("a2")).orElseThrow().result()).isEqualTo("A2".getBytes(StandardCharsets.UTF_8));
        assertThat(store.in(tx, keyOf.apply("a2")).orElseThrow().expiresAt()).isEqualTo(T0.plus(KeyPolicy.DEFAULT_RETENTION));
        assertThat(store.claimRequests).extracting(ClaimRequest::now).containsOnly(T0);
    }

    @Test
    void anItemWhoseCallNamesNoCodecIsRecordedWithTheBuiltInOneOfItsType() {
        FakeTx tx = store.begin();
        List<Outcome<Integer>> outcomes = engine(KeyPolicy.ofDefaults()).executeChunk(tx, List.of("a1", "a2"),
                item -> IdempotentCall.of(keyOf.apply(item)), String::length);
        assertThat(outcomes).extracting(Outcome::value).containsExactly(2, 2);
        assertThat(store.in(tx, keyOf.apply("a1")).orElseThrow().codec()).isEqualTo(ResultCodec.integer().name());
    }

    @Test
    void aDuplicateKeyIsRefusedBeforeTheStoreIsUsed() {
        assertThatThrownBy(() -> engine(KeyPolicy.ofDefaults()).executeChunk(store.begin(), List.of("a1", "b1", "a1"), callOf,
                item -> item)).isInstanceOf(DuplicateKeyInChunkException.class)
                .hasMessageContaining("0").hasMessageContaining("2");
        assertThat(store.calls).isEmpty();
    }

    @Test
    void anEmptyChunkTouchesNothing() {
        assertThat(engine(KeyPolicy.ofDefaults()).executeChunk(store.begin(), List.<String>of(), callOf,
                item -> item)).isEmpty();
        assertThat(store.calls).isEmpty();
    }

    @Test
    void anItemThatThrowsReleasesEveryClaimOfTheChunkButNotTheRecordsFound() {
        store.put(FakeStore.completed(keyOf.apply("a9"), Fingerprint.NONE, "string", "old".getBytes(StandardCharsets.UTF_8), T0));
        FakeTx tx = store.begin();
        IllegalStateException boom = new IllegalStateException("boom");
        RuntimeException releaseFailure = new IdempotencyStoreException(null, "release fails", null);
        assertThatThrownBy(() -> engine(KeyPolicy.ofDefaults()).executeChunk(tx, List.of("b1", "a9", "a2", "c3"), callOf, item -> {
                    if (item.equals("a2")) {
                        store.failRelease = releaseFailure;
                        throw boom;
                    }
                    return item;
                })).isSameAs(boom);
        assertThat(store.calls).filteredOn(c -> c.startsWith("release:")).containsExactlyInAnyOrder("release:1", "release:2", "release:3");
        assertThat(boom.getSuppressed()).hasSize(3).containsOnly(releaseFailure);
        assertThat(store.calls).noneMatch(c -> c.startsWith("complete:"));
    }

    @Test
    void anItemsClaimsAreReleasedAndTheyAreGone() {
        FakeTx tx = store.begin();
        assertThatThrownBy(() -> engine(KeyPolicy.ofDefaults()).executeChunk(tx, List.of("a1", "a2"), callOf,
                item -> {
                    throw new IllegalStateException(item);
                })).isInstanceOf(IllegalStateException.class);
        assertThat(store.in(tx, keyOf.apply("a1"))).isEmpty();
        assertThat(store.in(tx, keyOf.apply("a2"))).isEmpty();
    }

    @Test
    void aFinalFailureIsUndoneForItsItemAloneAndTheChunkGoesOn() {
        FakeTx tx = store.begin();
        List<Outcome<String>> outcomes = engine(KeyPolicy.builder().finalFailures(IllegalArgumentException.class).build())
                .executeChunk(tx, List.of("a1", "a2", "a3"), callOf, item -> {
                    tx.write(item);
                    if (item.equals("a2")) {
                        throw new IllegalArgumentException("declined " + item);
                    }
                    return item;
                });
        assertThat(outcomes).extracting(Outcome::status)
                .containsExactly(Outcome.Status.EXECUTED, Outcome.Status.FAILED, Outcome.Status.EXECUTED);
        assertThat(outcomes.get(1)).isEqualTo(new Outcome.Failed<>(keyOf.apply("a2"), IllegalArgumentException.class.getName(),
                "declined a2", T0, false));
        assertThat(tx.writes).containsExactly("a1", "a3");
        assertThat(store.in(tx, keyOf.apply("a2")).orElseThrow().status()).isEqualTo(RecordStatus.FAILED);
        assertThat(store.calls).filteredOn(c -> c.startsWith("savepoint")).containsExactly("savepoint", "savepoint-release",
                "savepoint", "savepoint-rollback", "savepoint", "savepoint-release");
    }

    @Test
    void aFailureThatIsNotFinalStopsTheChunkEvenWithASavepoint() {
        FakeTx tx = store.begin();
        IllegalStateException boom = new IllegalStateException("boom");
        assertThatThrownBy(() -> engine(KeyPolicy.builder().finalFailures(IllegalArgumentException.class).build())
                .executeChunk(tx, List.of("a1"), callOf, item -> {
                    throw boom;
                })).isSameAs(boom);
        assertThat(store.calls).doesNotContain("savepoint-rollback");
        assertThat(store.in(tx, keyOf.apply("a1"))).isEmpty();
    }

    @Test
    void recordsFoundAndBusyKeysAnswerWithoutRunningTheWork() {
        store.put(FakeStore.completed(keyOf.apply("a1"), Fingerprint.of("f-a1"), "string", "old".getBytes(StandardCharsets.UTF_8), T0));
        store.put(FakeStore.completed(keyOf.apply("a2"), Fingerprint.of("other"), "string", "old".getBytes(StandardCharsets.UTF_8), T0));
        store.busy.add(keyOf.apply("a3"));
        List<String> ran = new ArrayList<>();
        List<Outcome<String>> outcomes = engine(KeyPolicy.ofDefaults()).executeChunk(store.begin(), List.of("a1", "a2", "a3", "a4"),
                item -> callOf.apply(item).withFingerprint(Fingerprint.of("f-" + item)), item -> {
                    ran.add(item);
                    return item;
                });
        assertThat(outcomes).containsExactly(new Outcome.Replayed<>(keyOf.apply("a1"), "old", T0, T0.plus(Duration.ofDays(1))),
                new Outcome.Mismatch<>(keyOf.apply("a2")),
                new Outcome.InProgress<>(keyOf.apply("a3")), new Outcome.Executed<>(keyOf.apply("a4"), "a4"));
        assertThat(ran).containsExactly("a4");
    }

    @Test
    void aStoreThatAnswersTheWrongNumberOfClaimsIsAFailure() {
        store.claimAllAnswer = () -> List.of(Claim.acquired());
        assertThatThrownBy(() -> engine(KeyPolicy.ofDefaults()).executeChunk(store.begin(), List.of("a1", "a2"), callOf,
                item -> item)).isInstanceOf(IdempotencyStoreException.class)
                .hasMessageContaining("1 claims for a chunk of 2");
    }

    @Test
    void aResultOverTheLimitStopsTheChunk() {
        FakeTx tx = store.begin();
        assertThatThrownBy(() -> engine(KeyPolicy.builder().maxResultBytes(2).build()).executeChunk(tx, List.of("a1", "a2"), callOf,
                item -> item.equals("a2") ? "abc" : "ab")).isInstanceOf(ResultTooLargeException.class);
        assertThat(store.in(tx, keyOf.apply("a1"))).isEmpty();
        StoredRecord none = store.in(tx, keyOf.apply("a2")).orElse(null);
        assertThat(none).isNull();
    }

    @Test
    void aResultOfExactlyTheLimitIsRecorded() {
        FakeTx tx = store.begin();
        assertThat(engine(KeyPolicy.builder().maxResultBytes(2).build()).executeChunk(tx, List.of("a1"), callOf,
                item -> "ab")).extracting(Outcome::status).containsExactly(Outcome.Status.EXECUTED);
    }

    @Test
    void aClosedTransactionIsRefusedBeforeAnyClaim() {
        FakeTx tx = store.begin();
        tx.open = false;
        assertThatThrownBy(() -> engine(KeyPolicy.ofDefaults()).executeChunk(tx, List.of("a1"), callOf,
                item -> item)).isInstanceOf(dev.idempotency.TransactionRequiredException.class);
        assertThat(store.claimAllRequests).isEmpty();
    }
}
