package dev.idempotency.jakarta.rest;

import static dev.idempotency.jakarta.testing.TestClient.body;
import static dev.idempotency.jakarta.testing.TestClient.key;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.jakarta.testing.Jta;
import dev.idempotency.jakarta.testing.TestClient;
import dev.idempotency.testsupport.TestDatabases;
import io.agroal.api.AgroalDataSource;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * {@link IdempotencyRestFeature} on Jersey 4 over a real socket on 127.0.0.1, the resource
 * method's writes and the record in one JTA transaction (Narayana, Agroal) on H2: every row of the
 * HTTP layer's table that a transactional endpoint answers in this form.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class H2RestFilterTest {

    private AgroalDataSource dataSource;
    private JerseyPayments server;
    private TestClient client;

    @BeforeAll
    void start() throws Exception {
        dataSource = Jta.dataSource(TestDatabases.h2Url("jakarta-rest"), null, null, 24);
        server = new JerseyPayments(dataSource);
        client = new TestClient(server::uri);
    }

    @AfterAll
    void stop() throws Exception {
        if (server != null) {
            server.close();
        }
        if (dataSource != null) {
            dataSource.close();
        }
    }

    @Test
    void aSafeMethodPassesThroughAndIsNotRecorded() throws Exception {
        String key = key();
        HttpResponse<String> first = client.send(client.request("/payments/", "shop-a", key).GET().build());
        HttpResponse<String> second = client.send(client.request("/payments/", "shop-a", key).GET().build());

        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(second.body()).as("ran again").isNotEqualTo(first.body());
        assertThat(Jta.recorded(dataSource, "shop-a", key)).isFalse();
    }

    @Test
    void aMissingKeyIsAnswered400AndNothingRuns() throws Exception {
        String shop = "shop-" + UUID.randomUUID().toString().substring(0, 8);
        HttpResponse<String> response = client.send(client.request("/payments/", shop, null).POST(body("pay")).build());

        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(response.body()).contains(HttpIdempotency.PROBLEM_TYPES + "key-missing");
        assertThat(server.runs(shop, "null")).isZero();
    }

    @Test
    void aMalformedKeyIsAnswered400AndNothingRuns() throws Exception {
        HttpResponse<String> response = client.send(client.request("/payments/", "shop-a", "has space").POST(body("pay")).build());

        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.body()).contains(HttpIdempotency.PROBLEM_TYPES + "key-malformed", "\"idempotencyKey\":\"has space\"");
        assertThat(server.runs("shop-a", "has space")).isZero();
    }

    @Test
    void aRequestWithoutAPrincipalIsAnswered401() throws Exception {
        HttpResponse<String> response = client.send(HttpRequest.newBuilder(server.uri("/payments/")).header("Idempotency-Key", key())
                .POST(body("pay")).build());

        assertThat(response.statusCode()).isEqualTo(401);
        assertThat(response.body()).contains(HttpIdempotency.PROBLEM_TYPES + "unauthenticated");
    }

    @Test
    void aBodyOverTheLimitIsAnswered413AndNothingRuns() throws Exception {
        String key = key();
        HttpResponse<String> response = client.send(client.request("/payments/", "shop-a", key).POST(body("pay " + "x".repeat(5000)))
                .build());

        assertThat(response.statusCode()).isEqualTo(413);
        assertThat(response.body()).contains(HttpIdempotency.PROBLEM_TYPES + "request-too-large");
        assertThat(server.runs("shop-a", key)).isZero();
    }

    @Test
    void aKeyStillInProgressIsAnswered409WithRetryAfterAndNotRecorded() throws Exception {
        String key = key();
        HttpRequest held = client.request("/quick/", "shop-a", key).POST(body("hold:" + key)).build();
        CompletableFuture<HttpResponse<String>> first = client.http().sendAsync(held, HttpResponse.BodyHandlers.ofString());
        assertThat(server.hold(key).entered.await(30, TimeUnit.SECONDS)).isTrue();

        HttpResponse<String> duplicate = client.send(held);
        server.hold(key).release.countDown();

        assertThat(first.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
        assertThat(duplicate.statusCode()).isEqualTo(409);
        assertThat(duplicate.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(duplicate.body()).contains(HttpIdempotency.PROBLEM_TYPES + "key-in-progress");
        assertThat(server.runs("shop-a", key)).isEqualTo(1);
        assertThat(client.send(held).headers().firstValue("Idempotent-Replayed")).as("the 409 was not recorded").hasValue("true");
    }

    @Test
    void theSameKeyWithAnotherRequestIsAnswered422() throws Exception {
        String key = key();
        assertThat(client.send(client.request("/payments/", "shop-a", key).POST(body("pay 1")).build()).statusCode()).isEqualTo(201);
        HttpResponse<String> other = client.send(client.request("/payments/", "shop-a", key).POST(body("pay 2")).build());

        assertThat(other.statusCode()).isEqualTo(422);
        assertThat(other.body()).contains(HttpIdempotency.PROBLEM_TYPES + "key-reused");
        assertThat(server.runs("shop-a", key)).isEqualTo(1);
        assertThat(Jta.payments(dataSource, "shop-a", key)).isEqualTo(1);
    }

    @Test
    void aReplayIsTheFirstResponseByteForByteWithTheReplayHeaderAndOnlyTheChosenHeaders() throws Exception {
        String key = key();
        HttpResponse<byte[]> first = bytes(client.request("/payments/", "shop-a", key).POST(body("pay")).build());
        HttpResponse<byte[]> replay = bytes(client.request("/payments/", "shop-a", key).POST(body("pay")).build());

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(first.headers().firstValue("X-Trace")).isPresent();
        assertThat(replay.statusCode()).isEqualTo(201);
        assertThat(replay.body()).isEqualTo(first.body());
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(replay.headers().firstValue("Location")).isPresent().isEqualTo(first.headers().firstValue("Location"));
        assertThat(replay.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
        assertThat(replay.headers().firstValue("X-Trace")).as("not a replayed header").isEmpty();
        assertThat(replay.headers().firstValue("X-Earlier-Filter")).as("an earlier filter's header stays").hasValue("kept");
        assertThat(server.runs("shop-a", key)).isEqualTo(1);
        assertThat(Jta.payments(dataSource, "shop-a", key)).isEqualTo(1);
        assertThat(Jta.recorded(dataSource, "shop-a", key)).isTrue();
    }

    @Test
    void aResponseWithoutABodyIsRecordedByTheResponseFilterAndReplayed() throws Exception {
        String key = key();
        HttpResponse<String> first = client.send(client.request("/payments/", "shop-a", key).POST(body("none")).build());
        HttpResponse<String> replay = client.send(client.request("/payments/", "shop-a", key).POST(body("none")).build());

        assertThat(first.statusCode()).isEqualTo(204);
        assertThat(replay.statusCode()).isEqualTo(204);
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(server.runs("shop-a", key)).isEqualTo(1);
        assertThat(Jta.payments(dataSource, "shop-a", key)).isEqualTo(1);
    }

    @Test
    void aResourcesOwn5xxIsRecordedWithItsWritesAndReplayed() throws Exception {
        String key = key();
        HttpResponse<String> first = client.send(client.request("/payments/", "shop-a", key).POST(body("bad-gateway")).build());
        HttpResponse<String> replay = client.send(client.request("/payments/", "shop-a", key).POST(body("bad-gateway")).build());

        assertThat(first.statusCode()).isEqualTo(502);
        assertThat(replay.statusCode()).isEqualTo(502);
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(replay.body()).isEqualTo(first.body());
        assertThat(server.runs("shop-a", key)).isEqualTo(1);
        assertThat(Jta.payments(dataSource, "shop-a", key)).isEqualTo(1);
    }

    @Test
    void aResourceMethodThatThrowsRollsBackItsWritesWithTheRecordAndTheRetryRunsAgain() throws Exception {
        String key = key();
        HttpResponse<String> failed = client.send(client.request("/payments/", "shop-a", key).POST(body("fail")).build());

        assertThat(failed.statusCode()).isEqualTo(500);
        assertThat(failed.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(Jta.payments(dataSource, "shop-a", key)).as("the resource method's write was rolled back").isZero();
        assertThat(Jta.recorded(dataSource, "shop-a", key)).as("and the key's claim with it").isFalse();

        HttpResponse<String> retry = client.send(client.request("/payments/", "shop-a", key).POST(body("fail")).build());
        assertThat(retry.statusCode()).isEqualTo(500);
        assertThat(server.runs("shop-a", key)).as("the retry ran the resource method again").isEqualTo(2);
        assertThat(Jta.payments(dataSource, "shop-a", key)).isZero();
    }

    @Test
    void aWebApplicationExceptionIsAnsweredAsItsResponseAndRolledBack() throws Exception {
        String key = key();
        HttpResponse<String> refused = client.send(client.request("/payments/", "shop-a", key).POST(body("refuse")).build());

        assertThat(refused.statusCode()).isEqualTo(409);
        assertThat(refused.headers().firstValue("Retry-After")).as("the exception's own 409").isEmpty();
        assertThat(Jta.payments(dataSource, "shop-a", key)).as("the write was rolled back").isZero();
        assertThat(Jta.recorded(dataSource, "shop-a", key)).isFalse();
    }

    @Test
    void concurrentDuplicatesExecuteOnce() throws Exception {
        client.concurrentDuplicatesExecuteOnce("/payments/", 201, server::runs, dataSource);
    }

    @Test
    void theRetryingClientDrives200OperationsThroughLostAnswersOneExecutionEach() throws Exception {
        client.retryingClientDrives200OperationsThroughLostAnswers("/payments/", every -> server.lost.loseEvery = every, server::runs,
                dataSource);
    }

    private HttpResponse<byte[]> bytes(HttpRequest request) throws Exception {
        return client.http().send(request, HttpResponse.BodyHandlers.ofByteArray());
    }
}
