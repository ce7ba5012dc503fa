package dev.idempotency.jakarta.servlet;

import static dev.idempotency.jakarta.testing.TestClient.body;
import static dev.idempotency.jakarta.testing.TestClient.key;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.jakarta.testing.AbstractPaymentsTest;
import dev.idempotency.jakarta.testing.Jta;
import io.agroal.api.AgroalDataSource;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/**
 * {@link IdempotencyServletFilter} on embedded Jetty 12 ({@link JettyPayments}): the shared
 * scenarios of {@link AbstractPaymentsTest}, and what only the servlet filter does (final failures
 * recorded, a response too large recorded, lease mode, 503). Each database is a subclass.
 */
abstract class AbstractServletFilterTest extends AbstractPaymentsTest {

    @Override
    protected PaymentsServer start(AgroalDataSource dataSource) throws Exception {
        return new JettyPayments(dataSource);
    }

    @Test
    void aServletsOwn5xxReleasedByTheFilterRollsBackItsWritesAndTheRetryRunsItAgain() throws Exception {
        String key = key();
        HttpResponse<String> failed = send(request("/release/payments", "shop-a", key).POST(body("bad-gateway-once")).build());

        assertThat(failed.statusCode()).isEqualTo(502);
        assertThat(failed.headers().firstValue("Location")).as("the servlet's own answer, sent").isPresent();
        assertThat(Jta.recorded(dataSource, "shop-a", key)).as("nothing of the key recorded").isFalse();
        assertThat(Jta.payments(dataSource, "shop-a", key)).as("its write rolled back with the claim").isZero();

        HttpResponse<String> retry = send(request("/release/payments", "shop-a", key).POST(body("bad-gateway-once")).build());
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(server.runs("shop-a", key)).isEqualTo(2);
        assertThat(Jta.payments(dataSource, "shop-a", key)).isEqualTo(1);
    }

    @Test
    void aFinalFailureIsRecordedAnswered500AndReplayed() throws Exception {
        String key = key();
        HttpResponse<String> first = send(request("/final/", "shop-a", key).POST(body("declined-final")).build());
        HttpResponse<String> replay = send(request("/final/", "shop-a", key).POST(body("declined-final")).build());

        assertThat(first.statusCode()).isEqualTo(500);
        assertThat(first.body()).contains(HttpIdempotency.PROBLEM_TYPES + "operation-failed").doesNotContain("declined");
        assertThat(replay.statusCode()).isEqualTo(500);
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(server.runs("shop-a", key)).isEqualTo(1);
        assertThat(Jta.recorded(dataSource, "shop-a", key)).isTrue();
    }

    @Test
    void aResponseOverTheResultLimitRollsBackTheWritesAndIsAnswered500ResponseTooLargeRecorded() throws Exception {
        String key = key();
        HttpResponse<String> first = send(request("/payments/", "shop-a", key).POST(body("large")).build());
        HttpResponse<String> replay = send(request("/payments/", "shop-a", key).POST(body("large")).build());

        assertThat(first.statusCode()).isEqualTo(500);
        assertThat(first.body()).contains(HttpIdempotency.PROBLEM_TYPES + "response-too-large").hasSizeLessThan(4096);
        assertThat(replay.statusCode()).isEqualTo(500);
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(server.runs("shop-a", key)).as("not run again").isEqualTo(1);
        assertThat(Jta.payments(dataSource, "shop-a", key)).as("its write was rolled back").isZero();
    }

    @Test
    void leaseModeRunsTheServletOutsideATransactionWithItsAttemptAndReplays() throws Exception {
        String key = key();
        HttpResponse<String> first = send(request("/leased/", "shop-a", key).POST(body("pay")).build());
        HttpResponse<String> replay = send(request("/leased/", "shop-a", key).POST(body("pay")).build());

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(first.headers().firstValue("X-Downstream-Key")).as("the attempt reached the servlet").isPresent();
        assertThat(replay.statusCode()).isEqualTo(201);
        assertThat(replay.body()).isEqualTo(first.body());
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(server.runs("shop-a", key)).isEqualTo(1);
        assertThat(Jta.payments(dataSource, "shop-a", key)).isEqualTo(1);
    }

    @Test
    void aStoreThatCannotBeReachedIsAnswered503WithRetryAfterAndNothingRuns() throws Exception {
        String key = key();
        HttpResponse<String> response = send(request("/unreachable/", "shop-a", key).POST(body("pay")).build());

        assertThat(response.statusCode()).isEqualTo(503);
        assertThat(response.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(response.body()).contains(HttpIdempotency.PROBLEM_TYPES + "store-unavailable", "\"idempotencyKey\":\"" + key + "\"");
        assertThat(server.runs("shop-a", key)).isZero();
    }
}
