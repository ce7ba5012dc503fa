package dev.idempotency.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.ResultCodec;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class BuiltInCodecsNameTest {

    @Test
    void aNameHasOneToSixtyFourCharactersFromBangToTilde() {
        assertThat(BuiltInCodecs.checkName("x")).isEqualTo("x");
        assertThat(BuiltInCodecs.checkName("x".repeat(64))).isEqualTo("x".repeat(64));
        assertThat(BuiltInCodecs.checkName("!~")).isEqualTo("!~");
        for (String bad : List.of("", "x".repeat(65), "a b", "a\u007F", "a\u0020", "caf\u00E9", "a\tb")) {
            assertThatThrownBy(() -> BuiltInCodecs.checkName(bad)).as("'%s'", bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("1 to 64 printable ASCII");
        }
        assertThatThrownBy(() -> BuiltInCodecs.checkName(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void theBuiltInNamesAndFailureAreReserved() {
        for (String reserved : List.of("none", "string", "bytes", "int", "long", "boolean", "uuid", FailureRecords.CODEC)) {
            assertThatThrownBy(() -> BuiltInCodecs.checkName(reserved)).as(reserved).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("reserved");
        }
        assertThat(BuiltInCodecs.checkName("String")).isEqualTo("String");
    }

    @Test
    void messagesDescribeACodecAndWhatACallExpects() {
        assertThat(BuiltInCodecs.describe("int")).isEqualTo("codec 'int' (java.lang.Integer)");
        assertThat(BuiltInCodecs.describe("receipt-v1")).isEqualTo("codec 'receipt-v1'");
        assertThat(BuiltInCodecs.expectation(BuiltInCodecs.UUID)).isEqualTo("expects java.util.UUID (codec 'uuid')");
        ResultCodec<String> custom = ResultCodec.of("receipt-v1", s -> s, s -> s);
        assertThat(BuiltInCodecs.expectation(custom)).isEqualTo("decodes with codec 'receipt-v1'");
    }

    @Test
    void aValueFindsTheCodecOfItsType() throws Exception {
        assertThat(BuiltInCodecs.forValue("s")).containsSame(BuiltInCodecs.STRING);
        assertThat(BuiltInCodecs.forValue(new byte[0])).containsSame(BuiltInCodecs.BYTES);
        assertThat(BuiltInCodecs.forValue(1)).containsSame(BuiltInCodecs.INTEGER);
        assertThat(BuiltInCodecs.forValue(1L)).containsSame(BuiltInCodecs.LONG);
        assertThat(BuiltInCodecs.forValue(true)).containsSame(BuiltInCodecs.BOOLEAN);
        assertThat(BuiltInCodecs.forValue(UUID.randomUUID())).containsSame(BuiltInCodecs.UUID);
        assertThat(BuiltInCodecs.forValue(1.5)).isEmpty();
        assertThat(BuiltInCodecs.BOOLEAN.decode("true".getBytes())).isTrue();
        assertThat(BuiltInCodecs.BOOLEAN.decode("false".getBytes())).isFalse();
        assertThat(BuiltInCodecs.byName("bytes")).containsSame(BuiltInCodecs.BYTES);
        assertThat(BuiltInCodecs.byName("failure")).isEmpty();
    }
}
