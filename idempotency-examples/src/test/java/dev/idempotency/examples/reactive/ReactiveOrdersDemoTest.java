package dev.idempotency.examples.reactive;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReactiveOrdersDemoTest {

    @Test
    void eachOrderIsInsertedOnceWhateverTheRetriesAndDuplicates() {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        Map<String, Long> orders = ReactiveOrdersDemo.run(new PrintStream(buffer, true, StandardCharsets.UTF_8));

        assertThat(orders).containsExactly(Map.entry("order-1001", 1L), Map.entry("order-1002", 1L));
        String printed = buffer.toString(StandardCharsets.UTF_8);
        assertThat(printed).contains("first attempt:          EXECUTED order #1: 3 books")
                .contains("retry, answer was lost: REPLAYED order #1: 3 books")
                .contains("same key, other order:  MISMATCH: nothing inserted")
                .contains("8 duplicates at once:   1 executed, 7 replayed")
                .contains("the work ran once per key");
    }
}
