package dev.idempotency.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {

    @Test
    void whatItWritesItReadsBack() {
        Map<String, Object> command = new LinkedHashMap<>();
        command.put("id", 7);
        command.put("method", "Runtime.evaluate");
        command.put("params", Map.of("expression", "a \"quoted\" \\ line\nand a tab\t", "returnByValue", true));
        command.put("list", Arrays.asList(1.5, null, false, List.of()));
        String text = Json.write(command);
        assertThat(text).startsWith("{\"id\":7,\"method\":\"Runtime.evaluate\",").contains("\\u0009");
        Map<?, ?> read = (Map<?, ?>) Json.parse(text);
        assertThat(((Number) read.get("id")).intValue()).isEqualTo(7);
        assertThat(read.get("params")).isEqualTo(Map.of("expression", "a \"quoted\" \\ line\nand a tab\t", "returnByValue", true));
        assertThat(read.get("list")).isEqualTo(Arrays.asList(1.5, null, false, List.of()));
    }

    @Test
    void aDocumentWithTrailingCharactersIsRefused() {
        assertThatThrownBy(() -> Json.parse("[1] x")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("trailing");
    }
}
