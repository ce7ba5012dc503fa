package dev.idempotency.spring.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.RetryPolicy;
import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.http.RetryingHttpClient;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import reactor.core.publisher.Sinks;

/**
 * {@link IdempotencyWebFilter}'s promises over real HTTP, on one database: every status of the HTTP
 * layer's table, byte-equal replays, the handler's writes and the key's record committed or rolled
 * back together, concurrent duplicates run once, a cancelled request leaves nothing, and the
 * retrying client through lost answers.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractWebFluxTest {

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private PaymentsApp app;

    abstract WebFluxDatabase database();

    @BeforeAll
    void start() {
        app = new PaymentsApp(database());
    }

    @AfterAll
    void stop() {
        if (app != null) {
            app.close();
        }
    }

    private static String key() {
        return UUID.randomUUID().toString();
    }

    private HttpRequest.Builder request(String path, String client, String key) {
        HttpRequest.Builder b = HttpRequest.newBuilder(app.uri(path)).timeout(Duration.ofSeconds(30));
        if (client != null) {
            b.header("X-Client", client);
        }
        return key == null ? b : b.header("Idempotency-Key", key);
    }

    private HttpResponse<byte[]> post(String path, String client, String key, String body) throws Exception {
        return http.send(request(path, client, key).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofByteArray());
    }

    private static String text(HttpResponse<byte[]> response) {
        return new String(response.body(), StandardCharsets.UTF_8);
    }

    @Test
    void theFirstResponseIsRecordedWithTheWritesAndReplayedByteForByte() throws Exception {
        String key = key();
        HttpResponse<byte[]> first = post("/payments/ok", "shop-a", key, "pay 10");
        HttpResponse<byte[]> again = post("/payments/ok", "shop-a", key, "pay 10");

        assertThat(first.statusCode()).as(text(first)).isEqualTo(201);
        assertThat(first.headers().firstValue(HttpIdempotency.REPLAYED_HEADER)).isEmpty();
        assertThat(first.headers().firstValue("Set-Cookie")).isPresent();
        assertThat(again.statusCode()).isEqualTo(201);
        assertThat(again.body()).isEqualTo(first.body());
        assertThat(again.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
        assertThat(again.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
        assertThat(again.headers().firstValue(HttpIdempotency.REPLAYED_HEADER)).hasValue("true");
        assertThat(again.headers().firstValue("Set-Cookie")).as("per-client headers are not replayed").isEmpty();
        assertThat(app.payments.runs("shop-a", key)).isEqualTo(1);
        assertThat(app.database.payments("shop-a", key)).isEqualTo(1);
    }

    @Test
    void anotherClientsSameKeyIsAnotherOperation() throws Exception {
        String key = key();
        HttpResponse<byte[]> a = post("/payments/ok", "shop-a", key, "pay");
        HttpResponse<byte[]> b = post("/payments/ok", "shop-b", key, "pay");

        assertThat(a.statusCode()).isEqualTo(201);
        assertThat(b.statusCode()).isEqualTo(201);
        assertThat(b.body()).isNotEqualTo(a.body());
        assertThat(b.headers().firstValue(HttpIdempotency.REPLAYED_HEADER)).isEmpty();
    }

    @Test
    void aMissingKeyIs400AndAMalformedOneToo() throws Exception {
        HttpResponse<byte[]> missing = post("/payments/ok", "shop-a", null, "pay");
        HttpResponse<byte[]> malformed = post("/payments/ok", "shop-a", "\"unterminated", "pay");

        assertThat(missing.statusCode()).isEqualTo(400);
        assertThat(missing.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(text(missing)).contains(HttpIdempotency.PROBLEM_TYPES + "key-missing");
        assertThat(malformed.statusCode()).isEqualTo(400);
        assertThat(text(malformed)).contains(HttpIdempotency.PROBLEM_TYPES + "key-malformed");
        assertThat(app.payments.runs("shop-a", "null")).isZero();
    }

    @Test
    void withoutAnAuthenticatedClientIs401() throws Exception {
        HttpResponse<byte[]> response = post("/payments/ok", null, key(), "pay");

        assertThat(response.statusCode()).isEqualTo(401);
        assertThat(text(response)).contains(HttpIdempotency.PROBLEM_TYPES + "unauthenticated");
    }

    @Test
    void aBodyOverTheLimitIs413() throws Exception {
        String key = key();
        HttpResponse<byte[]> response = post("/payments/ok", "shop-a", key, "x".repeat(IdempotencyWebFilter.DEFAULT_MAX_REQUEST_BYTES + 1));

        assertThat(response.statusCode()).isEqualTo(413);
        assertThat(text(response)).contains(HttpIdempotency.PROBLEM_TYPES + "request-too-large");
        assertThat(app.payments.runs("shop-a", key)).isZero();
    }

    @Test
    void theSameKeyOnAnotherRequestIs422() throws Exception {
        String key = key();
        post("/payments/ok", "shop-a", key, "pay 10");
        HttpResponse<byte[]> other = post("/payments/ok", "shop-a", key, "pay 99");

        assertThat(other.statusCode()).isEqualTo(422);
        assertThat(text(other)).contains(HttpIdempotency.PROBLEM_TYPES + "key-reused", "\"idempotencyKey\":\"" + key + "\"");
        assertThat(app.payments.runs("shop-a", key)).isEqualTo(1);
    }

    @Test
    void aDuplicateWhileTheFirstRunsIs409WithRetryAfterThenTheReplay() throws Exception {
        String key = key();
        Sinks.Empty<Void> gate = Sinks.empty();
        app.payments.gate = gate;
        app.payments.entered = new CountDownLatch(1);
        CompletableFuture<HttpResponse<byte[]>> first = http.sendAsync(request("/payments/slow", "shop-a", key)
                .POST(HttpRequest.BodyPublishers.ofString("pay")).build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(app.payments.entered.await(30, TimeUnit.SECONDS)).isTrue();

        HttpResponse<byte[]> duplicate = post("/payments/slow", "shop-a", key, "pay");
        gate.tryEmitEmpty();
        HttpResponse<byte[]> completed = first.get(30, TimeUnit.SECONDS);
        HttpResponse<byte[]> retry = post("/payments/slow", "shop-a", key, "pay");

        assertThat(duplicate.statusCode()).as(text(duplicate)).isEqualTo(409);
        assertThat(duplicate.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(text(duplicate)).contains(HttpIdempotency.PROBLEM_TYPES + "key-in-progress");
        assertThat(completed.statusCode()).isEqualTo(201);
        assertThat(retry.body()).isEqualTo(completed.body());
        assertThat(retry.headers().firstValue(HttpIdempotency.REPLAYED_HEADER)).hasValue("true");
        assertThat(app.payments.runs("shop-a", key)).isEqualTo(1);
        assertThat(app.database.payments("shop-a", key)).isEqualTo(1);
    }

    @Test
    void aFailingHandlerRollsBackItsWritesAndTheClaimAndTheRetryRuns() throws Exception {
        String key = key();
        HttpResponse<byte[]> failed = post("/payments/fail", "shop-a", key, "pay");

        assertThat(failed.statusCode()).isEqualTo(500);
        assertThat(app.database.payments("shop-a", key)).as("the handler's write rolled back").isZero();

        HttpResponse<byte[]> retry = post("/payments/fail", "shop-a", key, "pay");
        assertThat(retry.statusCode()).isEqualTo(500);
        assertThat(retry.headers().firstValue(HttpIdempotency.REPLAYED_HEADER)).isEmpty();
        assertThat(app.payments.runs("shop-a", key)).as("nothing of the key was recorded: the retry ran").isEqualTo(2);
        assertThat(app.database.payments("shop-a", key)).isZero();
    }

    @Test
    void aHandlerWhoseAnnotationReleasesServerErrorsSendsIts502RollsBackAndTheRetryRunsIt() throws Exception {
        String key = key();
        HttpResponse<byte[]> failed = post("/released", "shop-a", key, "pay");

        assertThat(failed.statusCode()).isEqualTo(502);
        assertThat(failed.headers().firstValue("Location")).as("the handler's own answer, sent").isPresent();
        assertThat(app.database.payments("shop-a", key)).as("its write rolled back with the claim").isZero();

        HttpResponse<byte[]> retry = post("/released", "shop-a", key, "pay");
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.headers().firstValue(HttpIdempotency.REPLAYED_HEADER)).as("nothing of the key was recorded").isEmpty();
        assertThat(app.payments.runs("shop-a", key)).isEqualTo(2);
        assertThat(app.database.payments("shop-a", key)).isEqualTo(1);
    }

    @Test
    void aResponseOverTheLimitIsRolledBackAndAnsweredResponseTooLargeWithoutRunningAgain() throws Exception {
        String key = key();
        HttpResponse<byte[]> first = post("/payments/large", "shop-a", key, "pay");
        HttpResponse<byte[]> again = post("/payments/large", "shop-a", key, "pay");

        assertThat(first.statusCode()).isEqualTo(500);
        assertThat(text(first)).contains(HttpIdempotency.PROBLEM_TYPES + "response-too-large", "over the " + PaymentsApp.MAX_RESULT_BYTES + " bytes", "rolled back");
        assertThat(again.statusCode()).isEqualTo(500);
        assertThat(again.body()).isEqualTo(first.body());
        assertThat(again.headers().firstValue(HttpIdempotency.REPLAYED_HEADER)).hasValue("true");
        assertThat(app.payments.runs("shop-a", key)).isEqualTo(1);
        assertThat(app.database.payments("shop-a", key)).isZero();
    }

    @Test
    void aSafeMethodPassesThroughUnrecorded() throws Exception {
        HttpResponse<byte[]> response = http.send(request("/payments/42", "shop-a", key()).GET().build(),
                HttpResponse.BodyHandlers.ofByteArray());

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(text(response)).isEqualTo("payment 42");
        assertThat(response.headers().firstValue(HttpIdempotency.REPLAYED_HEADER)).isEmpty();
    }

    @Test
    void concurrentDuplicatesExecuteOnce() throws Exception {
        String key = key();
        List<CompletableFuture<HttpResponse<byte[]>>> all = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            all.add(http.sendAsync(request("/payments/ok", "shop-a", key).POST(HttpRequest.BodyPublishers.ofString("pay")).build(),
                    HttpResponse.BodyHandlers.ofByteArray()));
        }
        List<byte[]> bodies = new ArrayList<>();
        for (CompletableFuture<HttpResponse<byte[]>> f : all) {
            HttpResponse<byte[]> r = f.get(60, TimeUnit.SECONDS);
            assertThat(r.statusCode()).as(text(r)).isIn(201, 409);
            if (r.statusCode() == 201) {
                bodies.add(r.body());
            }
        }
        assertThat(bodies).isNotEmpty().allMatch(b -> java.util.Arrays.equals(b, bodies.get(0)));
        assertThat(app.payments.runs("shop-a", key)).isEqualTo(1);
        assertThat(app.database.payments("shop-a", key)).isEqualTo(1);
    }

    @Test
    void aClientThatGoesAwayMidWorkLeavesNothingAndTheNextAttemptRuns() throws Exception {
        String key = key();
        app.payments.gate = Sinks.empty(); // never released: the first attempt ends only by its cancellation
        app.payments.entered = new CountDownLatch(1);
        try (Socket socket = new Socket("127.0.0.1", app.port())) {
            OutputStream out = socket.getOutputStream();
            out.write(("POST /payments/slow HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Client: shop-a\r\nIdempotency-Key: " + key
                    + "\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\npay").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            assertThat(app.payments.entered.await(30, TimeUnit.SECONDS)).isTrue();
        } // closed mid-work: the server cancels the request's subscription

        app.payments.gate = Sinks.empty();
        app.payments.gate.tryEmitEmpty();
        HttpResponse<byte[]> next = null;
        for (int i = 0; i < 20 && (next == null || next.statusCode() == 409); i++) { // until the cancelled transaction has rolled back
            next = post("/payments/slow", "shop-a", key, "pay");
        }

        assertThat(next.statusCode()).as(text(next)).isEqualTo(201);
        assertThat(next.headers().firstValue(HttpIdempotency.REPLAYED_HEADER)).as("the next attempt ran").isEmpty();
        assertThat(app.payments.runs("shop-a", key)).isEqualTo(2);
        assertThat(app.database.payments("shop-a", key)).as("the cancelled attempt's write rolled back").isEqualTo(1);
    }

    @Test
    void theRetryingClientDrives200OperationsThroughLostAnswersOneExecutionEach() throws Exception {
        String client = "lossy-" + UUID.randomUUID().toString().substring(0, 8);
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
        app.lossy.loseEvery = 3;
        try {
            for (int i = 0; i < 200; i++) {
                String key = key();
                keys.add(key);
                HttpResponse<String> response = retrying.send(request("/payments/ok", client, key)
                        .POST(HttpRequest.BodyPublishers.ofString("pay " + i)).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
                ids.add(response.body());
            }
        } finally {
            app.lossy.loseEvery = 0;
        }
        assertThat(ids).hasSize(200);
        assertThat(sent.get()).as("answers were lost and retried").isGreaterThan(250);
        java.util.Map<String, Long> payments = app.database.paymentsByKey(client);
        assertThat(payments).hasSize(200);
        for (String key : keys) {
            assertThat(app.payments.runs(client, key)).as("executions of %s", key).isEqualTo(1);
            assertThat(payments.get(key)).as("payments of %s", key).isEqualTo(1);
        }
    }

    @Test
    void withoutTheFilterTheSameLostAnswersMakeAPaymentEach() throws Exception {
        String key = key();
        RetryingHttpClient retrying = RetryingHttpClient.builder(http)
                .retryPolicy(RetryPolicy.builder().maxAttempts(5).backoff(Duration.ofMillis(5), Duration.ofMillis(20)).build()).build();
        app.lossy.seen.set(0);
        app.lossy.loseEvery = 1; // every answer lost: five attempts, five payments
        try {
            retrying.send(request("/unprotected", "shop-a", key).POST(HttpRequest.BodyPublishers.ofString("pay")).build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (java.io.IOException expected) {
            // the last attempt's answer was lost too
        } finally {
            app.lossy.loseEvery = 0;
        }
        assertThat(app.database.payments("shop-a", key)).as("the control: lost answers repeat the payment").isEqualTo(5);
    }
}
