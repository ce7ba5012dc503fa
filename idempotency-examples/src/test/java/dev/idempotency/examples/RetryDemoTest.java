package dev.idempotency.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class RetryDemoTest {

    @Test
    void unprotectedRetriesDuplicateAndProtectedOnesRunOncePerKey() throws Exception {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        List<RetryDemo.Totals> totals = RetryDemo.run(new PrintStream(buffer, true, StandardCharsets.UTF_8));
        RetryDemo.Totals unprotected = totals.get(0);
        RetryDemo.Totals protectedRun = totals.get(1);

        assertThat(unprotected.executions()).isEqualTo(15);
        assertThat(unprotected.charges()).isEqualTo(6);
        assertThat(unprotected.centsCharged()).isEqualTo(3 * (1250 + 990));

        assertThat(protectedRun.executions()).isEqualTo(5);
        assertThat(protectedRun.charges()).isEqualTo(2);
        assertThat(protectedRun.centsCharged()).isEqualTo(1250 + 990);
        assertThat(protectedRun.reservations()).isEqualTo(2);
        assertThat(protectedRun.unitsReserved()).isEqualTo(3);

        String printed = buffer.toString(StandardCharsets.UTF_8);
        assertThat(printed).contains("REPLAYED: insufficient inventory: 5 x sku-2 requested, 2 available")
                .contains("MISMATCH")
                .contains("the work ran once per key");
    }
}
