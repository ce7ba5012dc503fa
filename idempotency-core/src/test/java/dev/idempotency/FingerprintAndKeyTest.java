package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class FingerprintAndKeyTest {

    @Test
    void fingerprintsAreSha256Hex() {
        // SHA-256("abc"), from FIPS 180-2.
        assertThat(Fingerprint.of("abc").value()).isEqualTo("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assertThat(Fingerprint.of("abc".getBytes(StandardCharsets.UTF_8))).isEqualTo(Fingerprint.of("abc"));
        assertThat(Fingerprint.fromValue(Fingerprint.of("abc").value())).isEqualTo(Fingerprint.of("abc"));
        assertThat(Fingerprint.fromValue("-")).isSameAs(Fingerprint.NONE);
        assertThatThrownBy(() -> Fingerprint.fromValue("xyz")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void partsAreLengthPrefixedSoBoundariesMatter() {
        assertThat(Fingerprint.ofParts("ab", "c")).isNotEqualTo(Fingerprint.ofParts("a", "bc"));
        assertThat(Fingerprint.ofParts("a", "b")).isEqualTo(Fingerprint.ofParts("a", "b"));
        assertThatThrownBy(() -> Fingerprint.ofParts("a", new Object())).hasMessageContaining("parts[1]");
    }

    @Test
    void derivedKeysAreDeterministicAndDistinct() {
        IdempotencyKey key = IdempotencyKey.of("tenant", "k-1");
        assertThat(key.derive("provider")).isEqualTo(IdempotencyKey.of("tenant", "k-1").derive("provider"));
        assertThat(key.derive("provider")).isNotEqualTo(key.derive("mailer"));
        assertThat(key.derive("provider").id()).hasSize(64);
        assertThat(KeyPolicy.ofDefaults().validate(key.derive("provider"))).isNotNull();
    }

    @Test
    void keysCompareByScopeAndId() {
        assertThat(IdempotencyKey.of("a", "b")).isEqualTo(IdempotencyKey.of("a", "b")).hasSameHashCodeAs(IdempotencyKey.of("a", "b"));
        assertThat(IdempotencyKey.of("a", "b")).isNotEqualTo(IdempotencyKey.of("A", "b"));
        assertThat(IdempotencyKey.of("id").scope()).isEqualTo(IdempotencyKey.DEFAULT_SCOPE);
        assertThat(IdempotencyKey.of("a", "b")).hasToString("a/b");
    }

    @Test
    void anEmptyOrBlankIdOrScopeIsRefusedWhenTheKeyIsBuilt() {
        for (String blank : new String[] {"", " ", "\t", "   "}) {
            assertThatThrownBy(() -> IdempotencyKey.of("tenant", blank)).as("id '%s'", blank)
                    .isInstanceOf(InvalidKeyException.class).hasMessageContaining("key id must not be blank");
            assertThatThrownBy(() -> IdempotencyKey.of(blank, "k-1")).as("scope '%s'", blank)
                    .isInstanceOf(InvalidKeyException.class).hasMessageContaining("scope must not be blank");
            assertThatThrownBy(() -> IdempotencyKey.of(blank)).isInstanceOf(InvalidKeyException.class);
        }
        assertThatThrownBy(() -> IdempotencyKey.of(null, "k-1")).isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("scope must not be null");
        assertThat(IdempotencyKey.of("t", " k ").id()).as("only the policy refuses spaces around an id").isEqualTo(" k ");
    }
}
