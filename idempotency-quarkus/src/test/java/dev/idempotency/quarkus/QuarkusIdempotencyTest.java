package dev.idempotency.quarkus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.jakarta.testing.TestClient;
import dev.idempotency.micrometer.MicrometerIdempotencyListener;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * A Quarkus application (Quarkus REST, Narayana, Agroal, H2; PostgreSQL in
 * {@link QuarkusPostgresIdempotencyTest}) with this module, quarkus-micrometer and a few
 * {@code idempotency.*} properties, over real HTTP on 127.0.0.1: a {@code @Transactional}
 * resource method under {@code @IdempotentResource}.
 */
@QuarkusTest
class QuarkusIdempotencyTest {

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @TestHTTPResource("/payments")
    URI payments;

    @Inject
    PaymentsResource resource;

    @Inject
    MeterRegistry registry;

    @Inject
    DataSource dataSource;

    @Test
    void aReplayIsTheFirstResponseByteForByteAndTheMethodRanOnce() throws Exception {
        String key = key();
        HttpResponse<byte[]> first = send(request("shop-a", key, "pay"));
        HttpResponse<byte[]> replay = send(request("shop-a", key, "pay"));

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(replay.statusCode()).isEqualTo(201);
        assertThat(replay.body()).isEqualTo(first.body());
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(replay.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
        assertThat(runs("shop-a", key)).isEqualTo(1);
        assertThat(resource.payments("shop-a", key)).isEqualTo(1);
        assertThat(resource.recorded("shop-a", key)).isTrue();
    }

    @Test
    void quarkusMicrometerCountsTheCallsByOutcome() throws Exception {
        String client = "metrics-" + key();
        String key = key();
        assertThat(send(request(client, key, "pay")).statusCode()).isEqualTo(201);
        assertThat(send(request(client, key, "pay")).statusCode()).isEqualTo(201);
        assertThat(send(request(client, key, "pay again")).statusCode()).isEqualTo(422);

        assertThat(executions(client, "executed")).isEqualTo(1);
        assertThat(executions(client, "replayed")).isEqualTo(1);
        assertThat(executions(client, "mismatch")).isEqualTo(1);
    }

    private long executions(String scope, String outcome) {
        return registry.get(MicrometerIdempotencyListener.EXECUTIONS).tag("scope", scope).tag("outcome", outcome).timer().count();
    }

    @Test
    void theLayersRefusalsAnswer400And401And413And422() throws Exception {
        assertThat(send(HttpRequest.newBuilder(payments).POST(HttpRequest.BodyPublishers.ofString("pay")).header("X-Client", "shop-a")
                .build()).statusCode()).as("no key").isEqualTo(400);
        assertThat(send(HttpRequest.newBuilder(payments).POST(HttpRequest.BodyPublishers.ofString("pay")).header("Idempotency-Key", key())
                .build()).statusCode()).as("no principal").isEqualTo(401);
        assertThat(send(request("shop-a", key(), "pay " + "x".repeat(5000))).statusCode()).as("over idempotency.max-request-bytes")
                .isEqualTo(413);
        String key = key();
        assertThat(send(request("shop-a", key, "pay 1")).statusCode()).isEqualTo(201);
        HttpResponse<byte[]> reused = send(request("shop-a", key, "pay 2"));
        assertThat(reused.statusCode()).isEqualTo(422);
        assertThat(reused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    }

    @Test
    void aKeyStillInProgressIsAnswered409WithRetryAfter() throws Exception {
        String key = key();
        CompletableFuture<HttpResponse<byte[]>> first = http.sendAsync(request("shop-a", key, "hold:" + key),
                HttpResponse.BodyHandlers.ofByteArray());
        CountDownLatch[] hold = PaymentsResource.hold(key);
        assertThat(hold[0].await(30, TimeUnit.SECONDS)).isTrue();

        HttpResponse<byte[]> duplicate = send(request("shop-a", key, "hold:" + key));
        hold[1].countDown();

        assertThat(first.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
        assertThat(duplicate.statusCode()).isEqualTo(409);
        assertThat(duplicate.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(runs("shop-a", key)).isEqualTo(1);
    }

    @Test
    void aMethodThatThrowsRollsBackItsWritesWithTheRecordAndTheRetryRunsAgain() throws Exception {
        String key = key();
        assertThat(send(request("shop-a", key, "fail")).statusCode()).isEqualTo(500);
        assertThat(resource.payments("shop-a", key)).as("the write was rolled back").isZero();
        assertThat(resource.recorded("shop-a", key)).as("with the key's claim").isFalse();

        assertThat(send(request("shop-a", key, "fail")).statusCode()).isEqualTo(500);
        assertThat(runs("shop-a", key)).as("the retry ran the method again").isEqualTo(2);
    }

    @Test
    void concurrentDuplicatesExecuteOnce() throws Exception {
        String key = key();
        List<CompletableFuture<HttpResponse<byte[]>>> all = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            all.add(http.sendAsync(request("shop-a", key, "pay"), HttpResponse.BodyHandlers.ofByteArray()));
        }
        for (CompletableFuture<HttpResponse<byte[]>> f : all) {
            assertThat(f.get(60, TimeUnit.SECONDS).statusCode()).isIn(201, 409);
        }
        assertThat(runs("shop-a", key)).isEqualTo(1);
        assertThat(resource.payments("shop-a", key)).isEqualTo(1);
    }

    @Test
    void aResourceMethodWhoseAnnotationReleasesServerErrorsSendsIts502RollsBackAndTheRetryRunsIt() throws Exception {
        String key = key();
        HttpRequest released = HttpRequest.newBuilder(payments.resolve("/payments/released")).timeout(Duration.ofSeconds(30))
                .header("X-Client", "shop-a").header("Idempotency-Key", key).POST(HttpRequest.BodyPublishers.ofString("pay")).build();
        assertThat(send(released).statusCode()).isEqualTo(502);
        assertThat(resource.payments("shop-a", key)).as("the write was rolled back").isZero();
        assertThat(resource.recorded("shop-a", key)).as("nothing of the key recorded").isFalse();

        assertThat(send(released).statusCode()).isEqualTo(502);
        assertThat(runs("shop-a", key)).as("the retry ran the method again").isEqualTo(2);
    }

    @Test
    void theRetryingClientDrives200OperationsThroughLostAnswersOneExecutionEach() throws Exception {
        new TestClient(payments::resolve).retryingClientDrives200OperationsThroughLostAnswers("/payments",
                every -> LostAnswers.loseEvery = every, QuarkusIdempotencyTest::runs, dataSource);
    }

    private HttpRequest request(String client, String key, String body) {
        return HttpRequest.newBuilder(payments).timeout(Duration.ofSeconds(30)).header("X-Client", client).header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
    }

    private HttpResponse<byte[]> send(HttpRequest request) throws Exception {
        return http.send(request, HttpResponse.BodyHandlers.ofByteArray());
    }

    private static int runs(String client, String key) {
        AtomicInteger n = PaymentsResource.RUNS.get(client + "/" + key);
        return n == null ? 0 : n.get();
    }

    private static String key() {
        return UUID.randomUUID().toString();
    }
}
