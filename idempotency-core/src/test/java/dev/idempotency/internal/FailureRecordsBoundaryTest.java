package dev.idempotency.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class FailureRecordsBoundaryTest {

    static int utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }

    @Test
    void cutCountsTheUtf8BytesOfEachCodePointAtItsBoundaries() {
        String[] oneOfEach = {"\u007F", "\u0080", "\u07FF", "\u0800", "\uFFFF", new String(Character.toChars(0x10000))};
        int[] sizes = {1, 2, 2, 3, 3, 4};
        for (int i = 0; i < oneOfEach.length; i++) {
            String twice = oneOfEach[i] + oneOfEach[i];
            assertThat(FailureRecords.cut(twice, sizes[i])).as("U+%04X", oneOfEach[i].codePointAt(0)).isEqualTo(oneOfEach[i]);
            assertThat(FailureRecords.cut(twice, sizes[i] - 1)).as("U+%04X", oneOfEach[i].codePointAt(0)).isEmpty();
            assertThat(FailureRecords.cut(twice, 2 * sizes[i])).isEqualTo(twice);
            assertThat(FailureRecords.cut(twice, 2 * sizes[i] - 1)).isEqualTo(oneOfEach[i]);
        }
        assertThat(FailureRecords.cut("abc", 0)).isEmpty();
        assertThat(FailureRecords.cut("", 5)).isEmpty();
    }

    @Test
    void cutKeepsTheLongestPrefixThatFits() {
        int[] codePoints = {'a', 0x7F, 0x80, 0xE9, 0x7FF, 0x800, 0x20AC, 0xFFFF, 0x10000, 0x1F4B3};
        qt().withFixedSeed(20_261_130L).withExamples(5_000)
                .forAll(lists().of(integers().between(0, codePoints.length - 1)).ofSizeBetween(0, 12), integers().between(0, 50))
                .checkAssert((picks, max) -> {
                    StringBuilder sb = new StringBuilder();
                    picks.forEach(p -> sb.appendCodePoint(codePoints[p]));
                    String s = sb.toString();
                    String cut = FailureRecords.cut(s, max);
                    assertThat(s).startsWith(cut);
                    assertThat(utf8(cut)).isLessThanOrEqualTo(max);
                    if (cut.length() < s.length()) {
                        int next = s.codePointAt(cut.length());
                        assertThat(utf8(cut) + utf8(new String(Character.toChars(next)))).isGreaterThan(max);
                    }
                });
    }

    @Test
    void ofLeavesRoomForTheNewlineAndDropsTheMessageWhenTheTypeFillsTheLimit() {
        String type = IllegalStateException.class.getName();
        int n = utf8(type);
        IllegalStateException failure = new IllegalStateException("xyz");
        assertThat(FailureRecords.of(failure, n + 4)).isEqualTo(new FailureRecords.Failure(type, "xyz"));
        assertThat(FailureRecords.of(failure, n + 3)).isEqualTo(new FailureRecords.Failure(type, "xy"));
        assertThat(FailureRecords.of(failure, n + 1)).isEqualTo(new FailureRecords.Failure(type, ""));
        assertThat(FailureRecords.of(failure, n)).isEqualTo(new FailureRecords.Failure(type, null));
        assertThat(FailureRecords.of(failure, n - 1)).isEqualTo(new FailureRecords.Failure(type.substring(0, n - 1), null));
        assertThat(FailureRecords.of(failure, n + 1).encode()).hasSize(n + 1);
        assertThat(FailureRecords.of(new IllegalStateException(), 1000)).isEqualTo(new FailureRecords.Failure(type, null));
    }

    @Test
    void decodeSplitsAtTheFirstNewlineAndNamesAMissingFailureUnknown() {
        assertThat(FailureRecords.decode(null)).isEqualTo(new FailureRecords.Failure("unknown", null));
        assertThat(FailureRecords.decode("T".getBytes(StandardCharsets.UTF_8))).isEqualTo(new FailureRecords.Failure("T", null));
        assertThat(FailureRecords.decode("T\n".getBytes(StandardCharsets.UTF_8))).isEqualTo(new FailureRecords.Failure("T", ""));
        assertThat(FailureRecords.decode("\nm".getBytes(StandardCharsets.UTF_8))).isEqualTo(new FailureRecords.Failure("", "m"));
        assertThat(FailureRecords.decode("T\na\nb".getBytes(StandardCharsets.UTF_8))).isEqualTo(new FailureRecords.Failure("T", "a\nb"));
        assertThat(new FailureRecords.Failure("T", null).encode()).isEqualTo("T".getBytes(StandardCharsets.UTF_8));
        assertThat(new FailureRecords.Failure("T", "é").encode()).isEqualTo("T\né".getBytes(StandardCharsets.UTF_8));
    }
}
