package dev.idempotency.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class FailureRecordsTest {

    @Test
    void aRecordedFailureRoundTrips() {
        FailureRecords.Failure f = FailureRecords.of(new IllegalStateException("card declined\nby issuer"), 1024);
        FailureRecords.Failure back = FailureRecords.decode(f.encode());
        assertThat(back).isEqualTo(new FailureRecords.Failure("java.lang.IllegalStateException", "card declined\nby issuer"));
        assertThat(FailureRecords.decode(FailureRecords.of(new IllegalStateException(), 1024).encode()).message()).isNull();
    }

    @Test
    void theEncodedFailureNeverExceedsTheLimitNorSplitsACharacter() {
        String message = "déclinée 💳 ".repeat(50);
        for (int limit = 0; limit <= 200; limit++) {
            FailureRecords.Failure f = FailureRecords.of(new IllegalArgumentException(message), limit);
            byte[] encoded = f.encode();
            assertThat(encoded.length).as("limit %d", limit).isLessThanOrEqualTo(limit);
            String text = new String(encoded, StandardCharsets.UTF_8);
            assertThat(text).doesNotContain("\uFFFD");
            assertThat(message).startsWith(f.message() == null ? "" : f.message());
        }
    }
}
