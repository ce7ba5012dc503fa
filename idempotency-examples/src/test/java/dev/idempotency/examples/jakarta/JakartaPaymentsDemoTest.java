package dev.idempotency.examples.jakarta;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Runs the Jakarta demonstration and checks what it prints: 201, the byte-equal replay, one payment row. */
class JakartaPaymentsDemoTest {

    @Test
    void theSecondPostWithTheSameKeyIsTheFirstAnswersReplayAndOnePaymentIsMade() throws Exception {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        JakartaPaymentsDemo.Result result = JakartaPaymentsDemo.run(new PrintStream(printed, true, StandardCharsets.UTF_8));

        assertThat(result).isEqualTo(new JakartaPaymentsDemo.Result(201, 201, "true", true, 1));
        assertThat(printed.toString(StandardCharsets.UTF_8))
                .contains("first:  201 {\"id\":\"", "(Idempotent-Replayed: true)", "replay byte-equal to first: true", "payment rows: 1");
    }
}
