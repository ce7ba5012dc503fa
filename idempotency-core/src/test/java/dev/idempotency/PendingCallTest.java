package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.fake.FakeStore;
import dev.idempotency.fake.FakeTx;
import dev.idempotency.spi.RecordStatus;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** {@link Idempotency#begin}: transactional mode in two steps, over the fake store. */
class PendingCallTest {

    static final IdempotencyKey KEY = IdempotencyKey.of("orders", "k1");

    final FakeStore store = new FakeStore();
    final Idempotency<FakeTx> engine = Idempotency.builder(store).clock(() -> Instant.parse("2026-01-01T10:00:00Z")).build();

    @Test
    void aClaimedCallRecordsItsResultInTheSameTransactionAndTheNextIsAnsweredWithIt() {
        FakeTx tx = store.begin();
        PendingCall<String> pending = engine.begin(IdempotentCall.of(KEY, ResultCodec.string()).withFingerprint(Fingerprint.ofParts("a")), tx);
        assertThat(pending.claimed()).isTrue();
        assertThatThrownBy(pending::answer).isInstanceOf(IllegalStateException.class).hasMessageContaining("complete(result)");
        assertThat(pending.complete("r1")).isEqualTo(new Outcome.Executed<>(KEY, "r1"));
        assertThatThrownBy(() -> pending.complete("r2")).isInstanceOf(IllegalStateException.class).hasMessageContaining("already");
        store.commit(tx);
        assertThat(store.committed(KEY).orElseThrow().status()).isEqualTo(RecordStatus.COMPLETED);

        FakeTx again = store.begin();
        PendingCall<String> replay = engine.begin(IdempotentCall.of(KEY, ResultCodec.string()).withFingerprint(Fingerprint.ofParts("a")), again);
        assertThat(replay.claimed()).isFalse();
        assertThat(replay.answer().status()).isEqualTo(Outcome.Status.REPLAYED);
        assertThat(replay.answer().value()).isEqualTo("r1");
        assertThatThrownBy(() -> replay.complete("r3")).isInstanceOf(IllegalStateException.class).hasMessageContaining("not claimed");
        PendingCall<String> other = engine.begin(IdempotentCall.of(KEY, ResultCodec.string()).withFingerprint(Fingerprint.ofParts("b")), again);
        assertThat(other.answer().status()).isEqualTo(Outcome.Status.MISMATCH);
    }

    @Test
    void aReleasedClaimLeavesNoRecordEvenIfTheCallerCommits() {
        FakeTx tx = store.begin();
        PendingCall<String> pending = engine.begin(IdempotentCall.of(KEY, ResultCodec.string()), tx);
        pending.release();
        pending.release(); // once only
        store.commit(tx);
        assertThat(store.committed(KEY)).isEmpty();
        assertThat(store.calls).containsExactly("check:k1", "claim:k1", "release:k1");
    }

    @Test
    void aResultThatCannotBeRecordedReleasesTheClaim() {
        Idempotency<FakeTx> small = Idempotency.builder(store).keyPolicy(KeyPolicy.builder().maxResultBytes(2).build()).build();
        FakeTx tx = store.begin();
        PendingCall<String> pending = small.begin(IdempotentCall.of(KEY, ResultCodec.string()), tx);
        assertThatThrownBy(() -> pending.complete("abc")).isInstanceOf(ResultTooLargeException.class);
        assertThat(store.in(tx, KEY)).isEmpty();
        assertThat(store.calls).contains("release:k1");
    }
}
