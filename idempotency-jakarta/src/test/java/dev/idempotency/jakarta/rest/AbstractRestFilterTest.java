package dev.idempotency.jakarta.rest;

import static dev.idempotency.jakarta.testing.TestClient.body;
import static dev.idempotency.jakarta.testing.TestClient.key;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.jakarta.testing.AbstractPaymentsTest;
import dev.idempotency.jakarta.testing.Jta;
import io.agroal.api.AgroalDataSource;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/**
 * {@link IdempotencyRestFeature} on Jersey 4 over a real socket on 127.0.0.1 ({@link JerseyPayments}),
 * the resource method's writes and the record in one JTA transaction (Narayana, Agroal): the
 * shared scenarios of {@link AbstractPaymentsTest}, and what is the filters' own (a response without
 * a body, a {@code WebApplicationException}). Each database is a subclass.
 */
abstract class AbstractRestFilterTest extends AbstractPaymentsTest {

    @Override
    protected PaymentsServer start(AgroalDataSource dataSource) throws Exception {
        return new JerseyPayments(dataSource);
    }

    @Test
    void aResponseWithoutABodyIsRecordedByTheResponseFilterAndReplayed() throws Exception {
        String key = key();
        HttpResponse<String> first = send(request("/payments/", "shop-a", key).POST(body("none")).build());
        HttpResponse<String> replay = send(request("/payments/", "shop-a", key).POST(body("none")).build());

        assertThat(first.statusCode()).isEqualTo(204);
        assertThat(replay.statusCode()).isEqualTo(204);
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(server.runs("shop-a", key)).isEqualTo(1);
        assertThat(Jta.payments(dataSource, "shop-a", key)).isEqualTo(1);
    }

    @Test
    void aResourceMethodsOwn5xxReleasedByItsAnnotationOrTheFeatureRollsBackItsWritesAndTheRetryRunsItAgain() throws Exception {
        String key = key();
        HttpResponse<String> failed = send(request("/payments/released", "shop-a", key).POST(body("pay")).build());

        assertThat(failed.statusCode()).isEqualTo(502);
        assertThat(failed.headers().firstValue("Location")).as("the method's own answer, sent").isPresent();
        assertThat(Jta.recorded(dataSource, "shop-a", key)).as("nothing of the key recorded").isFalse();
        assertThat(Jta.payments(dataSource, "shop-a", key)).as("its write rolled back with the claim").isZero();

        HttpResponse<String> retry = send(request("/payments/released", "shop-a", key).POST(body("pay")).build());
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(server.runs("shop-a", key)).isEqualTo(2);
        assertThat(Jta.payments(dataSource, "shop-a", key)).isEqualTo(1);

        String other = key(); // the feature's choice, for a method whose annotation does not say
        assertThat(send(request("/releasing/", "shop-a", other).POST(body("bad-gateway")).build()).statusCode()).isEqualTo(502);
        assertThat(Jta.recorded(dataSource, "shop-a", other)).isFalse();
        assertThat(Jta.payments(dataSource, "shop-a", other)).isZero();
    }

    @Test
    void aWebApplicationExceptionIsAnsweredAsItsResponseAndRolledBack() throws Exception {
        String key = key();
        HttpResponse<String> refused = send(request("/payments/", "shop-a", key).POST(body("refuse")).build());

        assertThat(refused.statusCode()).isEqualTo(409);
        assertThat(refused.headers().firstValue("Retry-After")).as("the exception's own 409").isEmpty();
        assertThat(Jta.payments(dataSource, "shop-a", key)).as("the write was rolled back").isZero();
        assertThat(Jta.recorded(dataSource, "shop-a", key)).isFalse();
    }
}
