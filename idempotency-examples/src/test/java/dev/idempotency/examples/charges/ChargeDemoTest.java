package dev.idempotency.examples.charges;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;

/** Runs the lease-mode demonstration and checks what it claims to show. */
class ChargeDemoTest {

    @Test
    void oneRealChargePerKeyRetriesReplayDeclinesReplayAndNoChargeStaysPending() throws Exception {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        ChargeDemo.Summary summary = ChargeDemo.run(new PrintStream(buffer, true, StandardCharsets.UTF_8));

        assertThat(summary.providerCharges()).as("real charges at the provider: three cards charged, one declined").isEqualTo(3);
        assertThat(summary.chargesPerProviderKey()).as("charges per Idempotency-Key at the provider").isEqualTo(1);
        assertThat(summary.rowsByStatus()).as("no pending charge is left").isEqualTo(Map.of("succeeded", 3L, "declined", 1L));
        assertThat(summary.answers()).filteredOn(a -> !a.startsWith("duplicate -> ")).containsExactlyInAnyOrder(
                "first -> 201 Created: charge 1 succeeded: pay_000001",
                "retry -> 201 Created: charge 1 succeeded: pay_000001 (Idempotent-Replayed: true)",
                "first -> 503 Service Unavailable (the payment provider answered 500: internal error): retry with the same key",
                "retry -> 201 Created: charge 2 succeeded: pay_000002",
                "first -> 201 Created: charge 3 succeeded: pay_000003",
                "retry -> 201 Created: charge 3 succeeded: pay_000003 (Idempotent-Replayed: true)",
                "first -> 402 Payment Required: card_declined: the card tok_declined was declined",
                "retry -> 402 Payment Required: card_declined: the card tok_declined was declined (Idempotent-Replayed: true)",
                "reuse -> 422 Unprocessable Content: this key was used for another charge");
        assertThat(summary.answers()).filteredOn(a -> a.startsWith("duplicate -> ")).singleElement(InstanceOfAssertFactories.STRING)
                .as("the concurrent duplicate is told when the first attempt's lease ends").matches("duplicate -> 409 Conflict, Retry-After: \\d+ .*");

        String printed = buffer.toString(StandardCharsets.UTF_8);
        assertThat(printed).contains("the retry was attempt 2: it resumed the pending charge")
                .contains("provider: 1 charge(s) made for this key")
                .contains("requests to the provider: 0 more");
    }
}
