package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
}
