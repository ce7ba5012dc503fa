package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.Period;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;

class FingerprintPartsTest {

    enum Color { RED, GREEN }

    enum Light { RED }

    /**
     * Groups of parts: within a group every value is the same part (and must encode the same);
     * values of different groups are different parts (and must encode differently). Neighbouring
     * groups hold the classic confusions: null against "null" and "", numbers against their text,
     * integers of different widths, -0.0, NaN, decimal scale, byte arrays of equal contents, enums
     * against their names, an unpaired surrogate against the '?' that UTF-8 would make of it.
     */
    private static final List<List<Object>> GROUPS = List.of(
            List.of("null"), Arrays.asList((Object) null), List.of(""), List.of(new byte[0]), List.of(Duration.ZERO),
            List.of(Period.ZERO), List.of(0, 0L, BigInteger.ZERO), List.of(0.0d, 0.0f), List.of(-0.0d),
            List.of(BigDecimal.ZERO, new BigDecimal("0.00")), List.of(false), List.of("false"), List.of("true"),
            List.of(true, Boolean.TRUE), List.of(new byte[] {1}), List.of(1, 1L, (short) 1, (byte) 1, BigInteger.ONE),
            List.of("1"), List.of(1.0d, 1.0f), List.of(BigDecimal.ONE, new BigDecimal("1.0"), new BigDecimal("1.00")),
            List.of(new BigDecimal("10"), new BigDecimal("1E+1")), List.of(10), List.of(-1, -1L),
            List.of(Long.MAX_VALUE, BigInteger.valueOf(Long.MAX_VALUE)), List.of(BigInteger.valueOf(Long.MAX_VALUE).add(BigInteger.ONE)),
            List.of(0.1d), List.of(0.1f, (double) 0.1f), List.of(new BigDecimal("0.1")), List.of("0.1"),
            List.of(Double.NaN, Float.NaN), List.of("NaN"), List.of("a"), List.of(new byte[] {97}, "a".getBytes(StandardCharsets.UTF_8)),
            List.of(new byte[] {0, 0, 0, 1, 97}), List.of("b"), List.of("ab"), List.of("é"), List.of("e\u0301"), List.of("\u0000"),
            List.of(new byte[] {(byte) 0xD8, 0}), List.of("\uD800"), List.of("\uDBFF"), List.of("?"), List.of("\uD83D\uDE00"), List.of("\uDE00\uD83D"), List.of("??"),
            List.of(Color.RED, Light.RED), List.of("RED"), List.of(Color.GREEN),
            List.of(UUID.fromString("123e4567-e89b-12d3-a456-426614174000")), List.of("123e4567-e89b-12d3-a456-426614174000"),
            List.of(new UUID(0, 1)), List.of(Instant.EPOCH), List.of("1970-01-01T00:00:00Z"), List.of(Instant.ofEpochSecond(0, 1)),
            List.of(OffsetDateTime.of(1970, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC)), List.of(LocalDate.of(1970, 1, 1)),
            List.of("1970-01-01"), List.of(ZoneOffset.UTC), List.of("Z"), List.of(Duration.ofSeconds(1)), List.of("PT1S"));

    /** One part: a group and which of its equal values to use. */
    private record Pick(int group, int member) {
        Object value() {
            List<Object> values = GROUPS.get(group);
            return values.get(member % values.size());
        }
    }

    @Test
    void differentListsOfPartsNeverShareAnEncodingAndEqualOnesAlwaysDo() {
        Gen<Pick> pick = integers().between(0, GROUPS.size() - 1).zip(integers().between(0, 4), Pick::new);
        Gen<List<Pick>> parts = lists().of(pick).ofSizeBetween(0, 4);
        qt().withFixedSeed(20_260_329L).withExamples(20_000)
                .forAll(parts, parts, integers().between(0, 3), integers().between(-1, 1))
                .checkAssert((a, other, mode, shift) -> {
                    // Mostly b is a close relative of a: the same groups with other members, or one
                    // part moved to a neighbouring (confusable) group; otherwise b is independent.
                    List<Pick> b = switch (mode) {
                        case 0, 1 -> related(a, other, 0);
                        case 2 -> related(a, other, shift == 0 ? 2 : shift);
                        default -> other;
                    };
                    boolean same = a.stream().map(Pick::group).toList().equals(b.stream().map(Pick::group).toList());
                    assertEncodeAlikeExactlyWhen(values(a), values(b), same);
                });
    }

    @Test
    void partBoundariesNeverShareAnEncoding() {
        // Byte arrays and strings whose bytes look like a length prefix followed by a part.
        List<Object> alphabet = Arrays.asList(null, "", "a", "b", "ab", "\u0000\u0000\u0000\u0001a", new byte[0],
                new byte[] {0, 0, 0, 1, 97}, new byte[] {-1, -1, -1, -1}, 1);
        Gen<List<Object>> parts = lists().of(integers().between(0, alphabet.size() - 1).map(alphabet::get)).ofSizeBetween(0, 3);
        qt().withFixedSeed(20_260_330L).withExamples(20_000)
                .forAll(parts, parts)
                .checkAssert((a, b) -> assertEncodeAlikeExactlyWhen(a.toArray(), b.toArray(), a.equals(b)));
    }

    private static void assertEncodeAlikeExactlyWhen(Object[] left, Object[] right, boolean same) {
        assertThat(Arrays.equals(Fingerprint.encodeParts(left), Fingerprint.encodeParts(right)))
                .as("%s and %s encode alike", Arrays.deepToString(left), Arrays.deepToString(right)).isEqualTo(same);
        assertThat(Fingerprint.ofParts(left).equals(Fingerprint.ofParts(right))).isEqualTo(same);
    }

    /** a's groups, with other's members, and the first part's group moved by {@code shift}. */
    private static List<Pick> related(List<Pick> a, List<Pick> other, int shift) {
        List<Pick> b = new ArrayList<>();
        for (int i = 0; i < a.size(); i++) {
            int group = i == 0 ? Math.floorMod(a.get(i).group() + shift, GROUPS.size()) : a.get(i).group();
            b.add(new Pick(group, other.isEmpty() ? 0 : other.get(i % other.size()).member()));
        }
        return b;
    }

    private static Object[] values(List<Pick> picks) {
        return picks.stream().map(Pick::value).toArray();
    }

    @Test
    void theClassicAmbiguitiesAreDistinct() {
        assertThat(Fingerprint.ofParts("ab", "c")).isNotEqualTo(Fingerprint.ofParts("a", "bc"));
        assertThat(Fingerprint.ofParts("a", null)).isEqualTo(Fingerprint.ofParts("a", null))
                .isNotEqualTo(Fingerprint.ofParts("a", "null"))
                .isNotEqualTo(Fingerprint.ofParts("a", ""))
                .isNotEqualTo(Fingerprint.ofParts("a"));
        assertThat(Fingerprint.ofParts(1)).isNotEqualTo(Fingerprint.ofParts("1")).isEqualTo(Fingerprint.ofParts(1L));
        assertThat(Fingerprint.ofParts((Object) null)).isNotEqualTo(Fingerprint.ofParts());
    }

    @Test
    void stringOnlyPartsKeepTheirEarlierFingerprints() {
        // Values computed with the strings-only encoding of earlier versions.
        assertThat(Fingerprint.ofParts("POST /charges", "c-1", "1250").value())
                .isEqualTo("d140bf7292d66eaf8c872bf2c0ca241d3d3cc358b6cc3982e777a8d5b77aec2a");
        assertThat(Fingerprint.ofParts().value()).isEqualTo("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assertThat(Fingerprint.ofParts("", "é ✓").value()).isEqualTo("4363f2ffde43a604c104abcf1f477db511a8be3ea8832764b0854c00ae2a735d");
        assertThat(IdempotencyKey.of("tenant", "k-1").derive("provider").id())
                .isEqualTo("8848a56bf67202231426bc3c6387cca4ffc082f5fa307ebe87602dd92d88603b");
    }

    @Test
    void aPartOfAnotherTypeIsRefusedByPositionAndType() {
        assertThatThrownBy(() -> Fingerprint.ofParts("POST /charges", Optional.of("x")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("parts[1]").hasMessageContaining("java.util.Optional");
        assertThatThrownBy(() -> Fingerprint.ofParts(new java.util.concurrent.atomic.AtomicLong(1)))
                .hasMessageContaining("parts[0]");
        assertThatThrownBy(() -> Fingerprint.ofParts((Object[]) null)).isInstanceOf(NullPointerException.class);
    }
}
