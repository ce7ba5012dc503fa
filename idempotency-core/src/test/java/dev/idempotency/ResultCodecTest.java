package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class ResultCodecTest {

    @Test
    void builtInsRoundTripAsReadableText() throws Exception {
        assertThat(new String(ResultCodec.longs().encode(-42L), StandardCharsets.UTF_8)).isEqualTo("-42");
        assertThat(ResultCodec.longs().decode(ResultCodec.longs().encode(Long.MIN_VALUE))).isEqualTo(Long.MIN_VALUE);
        assertThat(ResultCodec.integer().decode(ResultCodec.integer().encode(7))).isEqualTo(7);
        assertThat(ResultCodec.bool().decode(ResultCodec.bool().encode(false))).isFalse();
        UUID id = UUID.randomUUID();
        assertThat(ResultCodec.uuid().decode(ResultCodec.uuid().encode(id))).isEqualTo(id);
        assertThat(ResultCodec.string().decode(ResultCodec.string().encode("é ✓"))).isEqualTo("é ✓");
        assertThat(ResultCodec.bytes().decode(ResultCodec.bytes().encode(new byte[] {1, 2}))).containsExactly(1, 2);
        assertThat(ResultCodec.none().decode(ResultCodec.none().encode(null))).isNull();
        assertThatThrownBy(() -> ResultCodec.bool().decode("yes".getBytes(StandardCharsets.UTF_8))).hasMessageContaining("yes");
    }

    @Test
    void builtInsAreFoundByTheirRecordedName() {
        for (ResultCodec<?> codec : new ResultCodec<?>[] {ResultCodec.none(), ResultCodec.string(), ResultCodec.bytes(),
                ResultCodec.integer(), ResultCodec.longs(), ResultCodec.bool(), ResultCodec.uuid()}) {
            assertThat(ResultCodec.builtIn(codec.name())).containsSame(codec);
        }
        assertThat(ResultCodec.builtIn("custom")).isEmpty();
    }

    @Test
    void aPairOfFunctionsIsACodec() throws Exception {
        ResultCodec<int[]> pair = ResultCodec.of("pair", a -> a[0] + "," + a[1],
                s -> new int[] {Integer.parseInt(s.split(",")[0]), Integer.parseInt(s.split(",")[1])});
        assertThat(pair.decode(pair.encode(new int[] {3, 4}))).containsExactly(3, 4);
        assertThat(pair.name()).isEqualTo("pair");
        assertThatThrownBy(() -> ResultCodec.of("bad name", String::valueOf, s -> s)).hasMessageContaining("codec name");
        assertThatThrownBy(() -> ResultCodec.of("string", String::valueOf, s -> s)).hasMessageContaining("reserved");
        assertThatThrownBy(() -> ResultCodec.of("failure", String::valueOf, s -> s)).hasMessageContaining("reserved");
    }

    /** An unnamed codec would share its recorded name with every other, and the name check could not tell them apart. */
    @Test
    void everyCodecMadeFromFunctionsIsNamed() {
        assertThat(java.util.Arrays.stream(ResultCodec.class.getMethods()).filter(m -> m.getName().equals("of")))
                .isNotEmpty()
                .allSatisfy(of -> assertThat(of.getParameterTypes()[0]).as("first parameter of %s", of).isEqualTo(String.class));
    }
}
