package dev.idempotency.jakarta.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.RetryPolicy;
import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.http.RetryingHttpClient;
import dev.idempotency.jakarta.testing.Jta;
import io.agroal.api.AgroalDataSource;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * {@link IdempotencyServletFilter} on embedded Jetty 12 over a real socket on 127.0.0.1, with
 * {@code java.net.http} as the client, the servlet's writes and the record in one JTA transaction
 * (Narayana, Agroal), against a real database: every row of the HTTP layer's table that a
 * transactional endpoint answers. Each database is a subclass.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractServletFilterTest {

    private AgroalDataSource dataSource;
    private JettyPayments server;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** @return a pool on this run's database, managed by {@link Jta#transactionManager()} */
    abstract AgroalDataSource dataSource() throws Exception;

    @BeforeAll
    void start() throws Exception {
        dataSource = dataSource();
        server = new JettyPayments(dataSource);
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
        HttpResponse<String> first = send(request("/payments/", "shop-a", key).GET().build());
        HttpResponse<String> second = send(request("/payments/", "shop-a", key).GET().build());

        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(second.body()).as("ran again").isNotEqualTo(first.body());
        assertThat(second.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(Jta.recorded(dataSource, "shop-a", key)).isFalse();
    }

    @Test
    void aMissingKeyIsAnswered400AndNothingRuns() throws Exception {
        String client = "shop-" + UUID.randomUUID().toString().substring(0, 8);
        HttpResponse<String> response = send(request("/payments/", client, null).POST(body("pay")).build());

        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(response.body()).contains(HttpIdempotency.PROBLEM_TYPES + "key-missing");
        assertThat(server.runs(client, "null")).isZero();
    }

    @Test
    void aMalformedKeyIsAnswered400AndNothingRuns() throws Exception {
        HttpResponse<String> response = send(request("/payments/", "shop-a", "has space").POST(body("pay")).build());

        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.body()).contains(HttpIdempotency.PROBLEM_TYPES + "key-malformed", "\"idempotencyKey\":\"has space\"");
        assertThat(server.runs("shop-a", "has space")).isZero();
    }

    @Test
    void aRequestWithoutAClientIsAnswered401() throws Exception {
        HttpResponse<String> response = send(HttpRequest.newBuilder(server.uri("/payments/")).header("Idempotency-Key", key())
                .POST(body("pay")).build());

        assertThat(response.statusCode()).isEqualTo(401);
        assertThat(response.body()).contains(HttpIdempotency.PROBLEM_TYPES + "unauthenticated");
    }

    @Test
    void aBodyOverTheLimitIsAnswered413AndNothingRuns() throws Exception {
        String key = key();
        HttpResponse<String> response = send(request("/payments/", "shop-a", key).POST(body("pay " + "x".repeat(5000))).build());

        assertThat(response.statusCode()).isEqualTo(413);
        assertThat(response.body()).contains(HttpIdempotency.PROBLEM_TYPES + "request-too-large");
        assertThat(server.runs("shop-a", key)).isZero();
    }

    @Test
    void aKeyStillInProgressIsAnswered409WithRetryAfterAndNotRecorded() throws Exception {
        String key = key();
        HttpRequest held = request("/quick/", "shop-a", key).POST(body("hold:" + key)).build();
        CompletableFuture<HttpResponse<String>> first = http.sendAsync(held, HttpResponse.BodyHandlers.ofString());
        assertThat(server.hold(key).entered.await(30, TimeUnit.SECONDS)).isTrue();

        HttpResponse<String> duplicate = send(held);
        server.hold(key).release.countDown();

        assertThat(first.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
        assertThat(duplicate.statusCode()).isEqualTo(409);
        assertThat(duplicate.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(duplicate.headers().firstValue("X-Earlier-Filter")).as("an earlier filter's header stays").hasValue("kept");
        assertThat(duplicate.body()).contains(HttpIdempotency.PROBLEM_TYPES + "key-in-progress");
        assertThat(server.runs("shop-a", key)).isEqualTo(1);
        assertThat(send(held).headers().firstValue("Idempotent-Replayed")).as("the 409 was not recorded").hasValue("true");
    }

    @Test
    void theSameKeyWithAnotherRequestIsAnswered422() throws Exception {
        String key = key();
        assertThat(send(request("/payments/", "shop-a", key).POST(body("pay 1")).build()).statusCode()).isEqualTo(201);
        HttpResponse<String> other = send(request("/payments/", "shop-a", key).POST(body("pay 2")).build());

        assertThat(other.statusCode()).isEqualTo(422);
        assertThat(other.body()).contains(HttpIdempotency.PROBLEM_TYPES + "key-reused");
        assertThat(server.runs("shop-a", key)).isEqualTo(1);
        assertThat(Jta.payments(dataSource, "shop-a", key)).isEqualTo(1);
    }

    @Test
    void aReplayIsTheFirstResponseByteForByteWithTheReplayHeaderAndOnlyTheChosenHeaders() throws Exception {
        String key = key();
        HttpResponse<String> first = send(request("/payments/", "shop-a", key).POST(body("pay")).build());
        HttpResponse<String> replay = send(request("/payments/", "shop-a", key).POST(body("pay")).build());

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(first.headers().firstValue("X-Trace")).isPresent();
        assertThat(replay.statusCode()).isEqualTo(201);
        assertThat(replay.body()).isEqualTo(first.body());
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(replay.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
        assertThat(replay.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
        assertThat(replay.headers().firstValue("X-Trace")).as("not a replayed header").isEmpty();
        assertThat(replay.headers().firstValue("X-Earlier-Filter")).as("an earlier filter's header stays").hasValue("kept");
        assertThat(server.runs("shop-a", key)).isEqualTo(1);
        assertThat(Jta.payments(dataSource, "shop-a", key)).isEqualTo(1);
        assertThat(Jta.recorded(dataSource, "shop-a", key)).isTrue();
    }

    @Test
    void aServletsOwn5xxIsRecordedWithItsWritesAndReplayed() throws Exception {
        String key = key();
        HttpResponse<String> first = send(request("/payments/", "shop-a", key).POST(body("bad-gateway")).build());
        HttpResponse<String> replay = send(request("/payments/", "shop-a", key).POST(body("bad-gateway")).build());

        assertThat(first.statusCode()).isEqualTo(502);
        assertThat(replay.statusCode()).isEqualTo(502);
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(replay.body()).isEqualTo(first.body());
        assertThat(server.runs("shop-a", key)).isEqualTo(1);
        assertThat(Jta.payments(dataSource, "shop-a", key)).isEqualTo(1);
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
    void aServletThatThrowsRollsBackItsWritesWithTheRecordAndTheRetryRunsAgain() throws Exception {
        String key = key();
        HttpResponse<String> failed = send(request("/payments/", "shop-a", key).POST(body("fail")).build());

        assertThat(failed.statusCode()).isEqualTo(500);
        assertThat(failed.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(Jta.payments(dataSource, "shop-a", key)).as("the servlet's write was rolled back").isZero();
        assertThat(Jta.recorded(dataSource, "shop-a", key)).as("and the key's claim with it").isFalse();

        HttpResponse<String> retry = send(request("/payments/", "shop-a", key).POST(body("fail")).build());
        assertThat(retry.statusCode()).isEqualTo(500);
        assertThat(server.runs("shop-a", key)).as("the retry ran the servlet again").isEqualTo(2);
        assertThat(Jta.payments(dataSource, "shop-a", key)).isZero();
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

    @Test
    void concurrentDuplicatesExecuteOnce() throws Exception {
        String key = key();
        List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            all.add(http.sendAsync(request("/payments/", "shop-a", key).POST(body("pay")).build(), HttpResponse.BodyHandlers.ofString()));
        }
        List<String> bodies = new ArrayList<>();
        for (CompletableFuture<HttpResponse<String>> f : all) {
            HttpResponse<String> r = f.get(60, TimeUnit.SECONDS);
            assertThat(r.statusCode()).as(r.body()).isIn(201, 409);
            if (r.statusCode() == 201) {
                bodies.add(r.body());
            }
        }
        assertThat(bodies).isNotEmpty().allMatch(bodies.get(0)::equals);
        assertThat(server.runs("shop-a", key)).isEqualTo(1);
        assertThat(Jta.payments(dataSource, "shop-a", key)).isEqualTo(1);
    }

    @Test
    void theRetryingClientDrives200OperationsThroughLostAnswersOneExecutionEach() throws Exception {
        String client = "lossy-" + UUID.randomUUID().toString().substring(0, 8);
        server.loseEvery = 3;
        AtomicInteger sent = new AtomicInteger();
        RetryingHttpClient retrying = RetryingHttpClient.builder(http)
                .retryPolicy(RetryPolicy.builder().maxAttempts(5).backoff(Duration.ofMillis(5), Duration.ofMillis(20)).build())
                .listener(new RetryingHttpClient.Listener() {
                    @Override
                    public void onSend(HttpRequest request, int attempt) {
                        sent.incrementAndGet();
                    }
                })
                .build();
        Set<String> ids = new HashSet<>();
        List<String> keys = new ArrayList<>();
        try {
            for (int i = 0; i < 200; i++) {
                String key = key();
                keys.add(key);
                HttpResponse<String> response = retrying.send(request("/payments/", client, key).POST(body("pay " + i)).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
                ids.add(response.body());
            }
        } finally {
            server.loseEvery = 0;
        }
        assertThat(ids).hasSize(200);
        assertThat(sent.get()).as("answers were lost and retried").isGreaterThan(250);
        for (String key : keys) {
            assertThat(server.runs(client, key)).as("executions of %s", key).isEqualTo(1);
            assertThat(Jta.payments(dataSource, client, key)).as("payments of %s", key).isEqualTo(1);
        }
    }

    @Test
    void withoutTheFilterTheSameLostAnswersMakeAPaymentEach() throws Exception {
        String key = key();
        server.losses.put("shop-a/" + key, new AtomicInteger(2));
        RetryingHttpClient retrying = RetryingHttpClient.builder(http)
                .retryPolicy(RetryPolicy.builder().maxAttempts(5).backoff(Duration.ofMillis(5), Duration.ofMillis(20)).build()).build();

        HttpResponse<String> response = retrying.send(request("/unprotected/", "shop-a", key).POST(body("pay")).build(),
                HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(201);
        assertThat(Jta.payments(dataSource, "shop-a", key)).as("the control: lost answers repeat the payment").isEqualTo(3);
    }

    private HttpRequest.Builder request(String path, String client, String key) {
        HttpRequest.Builder b = HttpRequest.newBuilder(server.uri(path)).timeout(Duration.ofSeconds(30)).header("X-Client", client);
        return key == null ? b : b.header("Idempotency-Key", key);
    }

    private static HttpRequest.BodyPublisher body(String text) {
        return HttpRequest.BodyPublishers.ofString(text);
    }

    private HttpResponse<String> send(HttpRequest request) throws Exception {
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private static String key() {
        return UUID.randomUUID().toString();
    }
}
