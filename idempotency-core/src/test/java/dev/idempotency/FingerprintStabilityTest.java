package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Fingerprints are stored with their records: a version that computed another digest for the same
 * request would answer every retry of an earlier request with {@code Mismatch}. These digests were
 * computed from the encoding the {@link Fingerprint#ofParts} Javadoc describes (kind tag, length,
 * payload), independently of the implementation.
 */
class FingerprintStabilityTest {

    enum Color { RED }

    @Test
    void everyKindOfPartKeepsItsDigest() {
        assertDigest("72a4fa3544e43a836ffcb268ce06ccdbc55d44d5e6b1b1c19216a53ea98301fd", (Object) null);
        assertDigest("b768753ecabda9202e5ee959171d66cd3daedc2f8c6de825019ee910491e6b06", "\uD800");
        assertDigest("6b8a10e0638f6ad8ba2142bf26020c3ed79ab2db27dc58580ca82bbf1b42efd2", true);
        assertDigest("dcea1204b99f7d635fe3a18bab37edc8a962a63d1345a243f8c6e1a1ac8269ad", false);
        assertDigest("4752cded3dbd2ad0f5036243d52580641ca8abbf6729c985caf255881a390e0f", 42);
        assertDigest("b47ce5a8c99fa1d57afe37cb6edbf509029ab8b594f1200c35ca0d81c6691a37", new BigInteger("18446744073709551616"));
        assertDigest("adfe819eee7270f310ba1b278080cc7464b0c338f3dfdee59edf701e946da5ad", 1.5d);
        assertDigest("fb10078d4fc92f9f577dda25feaa5c59075416376d836ad600cac226d3603de5", new BigDecimal("2.50"));
        assertDigest("26ad77cb618e35e04c956aeb66293d830663c47181cd1375a7977f9423d97c0f", (Object) new byte[] {1, 2, 3});
        assertDigest("0bb22721b8db202b1ab4a2e699e2dec0962c210d61f25ee30e6fe65fab73e78c", UUID.fromString("123e4567-e89b-12d3-a456-426614174000"));
        assertDigest("fca26746537861d927dd5efae263818fb81493426a787cfadf7be41c65cf3914", Color.RED);
        assertDigest("c8f405ca612f44fa68e73d9db73bcf10a744323e73d8e8830361658b48cea2b8", Instant.parse("2026-01-01T10:00:00Z"));
        assertDigest("262e290a5f15ddbbc91b0b1ff112f80aca14216654021e0684488f5beaea7db0", Duration.ofSeconds(90));
    }

    @Test
    void surrogatePairsAreTextAndUnpairedSurrogatesAreCodeUnits() {
        // A pair is a well-formed string: its UTF-8 bytes, as the strings-only encoding always did.
        assertDigest("05aed34dc30592af3a487ccafa49e8873fe2ebfc8c72ba7950c19c4f4f23c4e7", "\uD83D\uDE00");
        // A low surrogate without its high one cannot be UTF-8: it is kept as UTF-16 code units.
        assertDigest("0af78cc4772e11ce554b6fafd703548288b383b9b2c86b5118520076f4668f63", "a\uDE00");
        assertThat(Fingerprint.ofParts("\uD83D")).isNotEqualTo(Fingerprint.ofParts("\uDE00")).isNotEqualTo(Fingerprint.ofParts("?"));
    }

    @Test
    void partsOfEqualLengthButOtherContentDiffer() {
        assertThat(Fingerprint.ofParts("POST", "/charges", "1250")).isNotEqualTo(Fingerprint.ofParts("POST", "/charges", "1251"));
        assertThat(Fingerprint.ofParts((Object) new byte[] {1})).isNotEqualTo(Fingerprint.ofParts((Object) new byte[] {2}));
        assertThat(Fingerprint.ofParts(Instant.EPOCH)).isNotEqualTo(Fingerprint.ofParts(Instant.ofEpochSecond(1)));
    }

    @Test
    void fromValueAcceptsOnlyWhatValueProduces() {
        String value = Fingerprint.of("abc").value();
        assertThat(Fingerprint.fromValue(value)).isEqualTo(Fingerprint.of("abc")).hasSameHashCodeAs(Fingerprint.of("abc"));
        for (String wrong : new String[] {value.toUpperCase(java.util.Locale.ROOT), "g" + value.substring(1), value.substring(1) + "/",
                value.substring(1) + ":", value.substring(1) + "`", " " + value.substring(1), value.substring(1), value + "0", ""}) {
            assertThatThrownBy(() -> Fingerprint.fromValue(wrong)).as("'%s'", wrong)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a stored fingerprint");
        }
        assertThat(Fingerprint.fromValue("0123456789abcdef".repeat(4)).value()).isEqualTo("0123456789abcdef".repeat(4));
    }

    private static void assertDigest(String expected, Object... parts) {
        assertThat(Fingerprint.ofParts(parts).value()).as("digest of %s", java.util.Arrays.deepToString(parts)).isEqualTo(expected);
    }
}
