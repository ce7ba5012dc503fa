package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.fake.FakeRunner;
import dev.idempotency.fake.FakeStore;
import dev.idempotency.fake.FakeTx;
import java.util.List;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

class IdempotentCallTest {

    static final IdempotencyKey KEY = IdempotencyKey.of("orders", "k1");
    static final Fingerprint FP = Fingerprint.of("POST /orders sku-1");

    @Test
    void theBareCallHasNoFingerprintAndChoosesItsCodecByType() {
        IdempotentCall<String> call = IdempotentCall.of(KEY);
        assertThat(call.key()).isEqualTo(KEY);
        assertThat(call.fingerprint()).isSameAs(Fingerprint.NONE);
        assertThat(call.codec()).isEmpty();
        assertThat(call).hasToString("IdempotentCall[key=orders/k1, Fingerprint[none], codec=by result type]");
    }

    @Test
    void aFingerprintAndACodecAreCarriedAndKeptByEachOther() {
        IdempotentCall<String> fingerprinted = IdempotentCall.of(KEY, FP);
        assertThat(fingerprinted.fingerprint()).isEqualTo(FP);
        assertThat(fingerprinted.codec()).isEmpty();

        IdempotentCall<String> both = IdempotentCall.of(KEY, ResultCodec.string()).withFingerprint(FP);
        assertThat(both.key()).isEqualTo(KEY);
        assertThat(both.fingerprint()).isEqualTo(FP);
        assertThat(both.codec()).contains(ResultCodec.string());
        assertThat(both.toString()).contains("orders/k1", FP.toString(), "codec=string");
        assertThat(both.withFingerprint(Fingerprint.NONE).fingerprint()).isSameAs(Fingerprint.NONE);
        assertThat(both.withFingerprint(Fingerprint.NONE).codec()).contains(ResultCodec.string());
    }

    @Test
    void callsAreValuesComparedByKeyFingerprintAndCodec() {
        assertThat(IdempotentCall.of(KEY, FP)).isEqualTo(IdempotentCall.of(KEY).withFingerprint(FP))
                .hasSameHashCodeAs(IdempotentCall.of(KEY).withFingerprint(FP));
        assertThat(IdempotentCall.of(KEY, ResultCodec.string())).isEqualTo(IdempotentCall.of(KEY, ResultCodec.string()));
        assertThat(IdempotentCall.of(KEY)).isNotEqualTo(IdempotentCall.of(KEY, FP))
                .isNotEqualTo(IdempotentCall.of(KEY, ResultCodec.string()))
                .isNotEqualTo(IdempotentCall.of(IdempotencyKey.of("orders", "k2")))
                .isNotEqualTo(KEY);
    }

    @Test
    void nullsAreRefusedByName() {
        assertThatThrownBy(() -> IdempotentCall.of(null)).isInstanceOf(NullPointerException.class).hasMessage("key");
        assertThatThrownBy(() -> IdempotentCall.of(KEY, (Fingerprint) null)).isInstanceOf(NullPointerException.class)
                .hasMessage("fingerprint");
        assertThatThrownBy(() -> IdempotentCall.of(KEY, (ResultCodec<String>) null)).isInstanceOf(NullPointerException.class)
                .hasMessage("codec");
        assertThatThrownBy(() -> IdempotentCall.of(KEY).withFingerprint(null)).isInstanceOf(NullPointerException.class)
                .hasMessage("fingerprint");
    }

    @Test
    void aFingerprintAndACodecGoTogetherInOneCall() {
        IdempotentCall<String> call = IdempotentCall.of(KEY, FP, ResultCodec.string());
        assertThat(call.key()).isEqualTo(KEY);
        assertThat(call.fingerprint()).isEqualTo(FP);
        assertThat(call.codec()).contains(ResultCodec.string());
        assertThat(call).isEqualTo(IdempotentCall.of(KEY, ResultCodec.string()).withFingerprint(FP));
        assertThatThrownBy(() -> IdempotentCall.of(null, FP, ResultCodec.string())).hasMessage("key");
        assertThatThrownBy(() -> IdempotentCall.of(KEY, null, ResultCodec.string())).hasMessage("fingerprint");
        assertThatThrownBy(() -> IdempotentCall.of(KEY, FP, null)).hasMessage("codec");
    }

    /**
     * The chained form keeps the result type of where the call is used: {@code of(key)} as the
     * receiver of {@code withFingerprint} no longer fixes it to {@code Object}.
     */
    @Test
    void theChainedFingerprintKeepsTheTypeOfWhereTheCallIsUsed() {
        FakeStore store = new FakeStore();
        Idempotency<FakeTx> idempotency = Idempotency.of(store);
        IdempotentCall<String> typed = IdempotentCall.of(KEY).withFingerprint(FP);
        assertThat(typed).isEqualTo(IdempotentCall.of(KEY, FP));
        FakeTx tx = store.begin();
        Outcome<String> outcome = idempotency.execute(IdempotentCall.of(KEY).withFingerprint(FP), tx, () -> "reserved");
        String value = outcome.value();
        assertThat(value).isEqualTo("reserved");
        var inferred = idempotency.execute(IdempotentCall.of(IdempotencyKey.of("orders", "k2")).withFingerprint(FP), tx, () -> 42);
        Integer number = inferred.value();
        assertThat(number).isEqualTo(42);
    }

    /**
     * {@code execute(null, tx, work)} does not compile (the key and the call overloads are
     * ambiguous); a {@code null} held in a typed variable is refused at every entry point with a
     * {@link NullPointerException} naming the argument, before the store is used.
     */
    @Test
    void aNullKeyOrCallIsRefusedByNameAtEveryEntryPoint() {
        FakeStore store = new FakeStore();
        Idempotency<FakeTx> idempotency = Idempotency.of(store);
        ManagedIdempotency<FakeTx> managed = ManagedIdempotency.of(idempotency, new FakeRunner(store));
        LeasedIdempotency<FakeTx> leased = LeasedIdempotency.of(managed, store);
        FakeTx tx = store.begin();
        IdempotencyKey key = null;
        IdempotentCall<String> call = null;
        assertEachRefusedNaming("key", List.of(
                () -> idempotency.execute(key, tx, () -> "x"),
                () -> managed.execute(key, t -> "x"),
                () -> managed.writeLast(key, t -> "x"),
                () -> leased.lease(key, attempt -> "x"),
                () -> leased.run(key, Phases.<FakeTx, String, RuntimeException>call(attempt -> "x").result(ResultCodec.string()))));
        assertEachRefusedNaming("call", List.of(
                () -> idempotency.execute(call, tx, () -> "x"),
                () -> managed.execute(call, t -> "x"),
                () -> managed.writeLast(call, t -> "x"),
                () -> leased.lease(call, attempt -> "x"),
                () -> leased.run(call, Phases.<FakeTx, String, RuntimeException>call(attempt -> "x").result(ResultCodec.string()))));
    }

    private static void assertEachRefusedNaming(String argument, List<ThrowingCallable> entryPoints) {
        for (ThrowingCallable entry : entryPoints) {
            assertThatThrownBy(entry).isInstanceOf(NullPointerException.class).hasMessage(argument);
        }
    }
}
