package dev.idempotency.jakarta.testing;

import static dev.idempotency.jakarta.testing.TestClient.body;
import static dev.idempotency.jakarta.testing.TestClient.key;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.RetryPolicy;
import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.http.RetryingHttpClient;
import io.agroal.api.AgroalDataSource;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The scenarios that every filter of the {@code Idempotency-Key} header over JTA passes, whatever
 * runs it (the servlet filter, the Jakarta REST filters): a payments server on 127.0.0.1 whose
 * handler writes in the request's JTA transaction (Narayana, Agroal), {@code java.net.http} as the
 * client, every row of the HTTP layer's table that a transactional endpoint answers. The handler's
 * body words and paths are the server's ({@link PaymentsServer}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class AbstractPaymentsTest {

    /** A payments server on 127.0.0.1: {@code /payments/} (10 s lock timeout), {@code /quick/} (300 ms), {@code /unprotected/}. */
    public interface PaymentsServer extends AutoCloseable {
        /** @return the address of {@code path} */
        URI uri(String path);

        /** @return the handler's runs for the scope and key, rolled-back ones included */
        int runs(String scope, String key);

        /** @return the hold of that name, which a body {@code hold:NAME} waits on */
        Hold hold(String name);

        /** @return the filter that loses answers after the commit */
        dev.idempotency.jakarta.servlet.LostAnswers lost();
    }

    /** A handler that waits inside its transaction until released. */
    public static final class Hold {
        /** Counted down when the handler waits. */
        public final CountDownLatch entered = new CountDownLatch(1);
        /** Counted down to release it. */
        public final CountDownLatch release = new CountDownLatch(1);
    }

    /** The pool on this run's database, managed by {@link Jta#transactionManager()}. */
    protected AgroalDataSource dataSource;
    /** The server under test. */
    protected PaymentsServer server;
    /** Its client. */
    protected TestClient client;

    /** @return a pool on this run's database, managed by {@link Jta#transactionManager()} */
    protected abstract AgroalDataSource dataSource() throws Exception;

    /** @return the server, started on {@code dataSource} */
    protected abstract PaymentsServer start(AgroalDataSource dataSource) throws Exception;

    @BeforeAll
    void startServer() throws Exception {
        dataSource = dataSource();
        server = start(dataSource);
        client = new TestClient(server::uri);
    }

    @AfterAll
    void stopServer() throws Exception {
        if (server != null) {
            server.close();
        }
        if (dataSource != null) {
            dataSource.close();
        }
    }

    @Test
    protected void aSafeMethodPassesThroughAndIsNotRecorded() throws Exception {
        String key = key();
        HttpResponse<String> first = send(request("/payments/", "shop-a", key).GET().build());
        HttpResponse<String> second = send(request("/payments/", "shop-a", key).GET().build());

        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(second.body()).as("ran again").isNotEqualTo(first.body());
        assertThat(second.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(Jta.recorded(dataSource, "shop-a", key)).isFalse();
    }

    @Test
    protected void aMissingKeyIsAnswered400AndNothingRuns() throws Exception {
        String client = "shop-" + UUID.randomUUID().toString().substring(0, 8);
        HttpResponse<String> response = send(request("/payments/", client, null).POST(body("pay")).build());

        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(response.body()).contains(HttpIdempotency.PROBLEM_TYPES + "key-missing");
        assertThat(server.runs(client, "null")).isZero();
    }

    @Test
    protected void aMalformedKeyIsAnswered400AndNothingRuns() throws Exception {
        HttpResponse<String> response = send(request("/payments/", "shop-a", "has space").POST(body("pay")).build());

        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.body()).contains(HttpIdempotency.PROBLEM_TYPES + "key-malformed", "\"idempotencyKey\":\"has space\"");
        assertThat(server.runs("shop-a", "has space")).isZero();
    }

    @Test
    protected void aRequestWithoutAnAuthenticatedClientIsAnswered401() throws Exception {
        HttpResponse<String> response = send(HttpRequest.newBuilder(server.uri("/payments/")).header("Idempotency-Key", key())
                .POST(body("pay")).build());

        assertThat(response.statusCode()).isEqualTo(401);
        assertThat(response.body()).contains(HttpIdempotency.PROBLEM_TYPES + "unauthenticated");
    }

    @Test
    protected void aBodyOverTheLimitIsAnswered413AndNothingRuns() throws Exception {
        String key = key();
        HttpResponse<String> response = send(request("/payments/", "shop-a", key).POST(body("pay " + "x".repeat(5000))).build());

        assertThat(response.statusCode()).isEqualTo(413);
        assertThat(response.body()).contains(HttpIdempotency.PROBLEM_TYPES + "request-too-large");
        assertThat(server.runs("shop-a", key)).isZero();
    }

    @Test
    protected void aKeyStillInProgressIsAnswered409WithRetryAfterAndNotRecorded() throws Exception {
        String key = key();
        HttpRequest held = request("/quick/", "shop-a", key).POST(body("hold:" + key)).build();
        CompletableFuture<HttpResponse<String>> first = client.http().sendAsync(held, HttpResponse.BodyHandlers.ofString());
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
    protected void theSameKeyWithAnotherRequestIsAnswered422() throws Exception {
        String key = key();
        assertThat(send(request("/payments/", "shop-a", key).POST(body("pay 1")).build()).statusCode()).isEqualTo(201);
        HttpResponse<String> other = send(request("/payments/", "shop-a", key).POST(body("pay 2")).build());

        assertThat(other.statusCode()).isEqualTo(422);
        assertThat(other.body()).contains(HttpIdempotency.PROBLEM_TYPES + "key-reused");
        assertThat(server.runs("shop-a", key)).isEqualTo(1);
        assertThat(Jta.payments(dataSource, "shop-a", key)).isEqualTo(1);
    }

    @Test
    protected void aReplayIsTheFirstResponseByteForByteWithTheReplayHeaderAndOnlyTheChosenHeaders() throws Exception {
        String key = key();
        HttpResponse<byte[]> first = bytes(request("/payments/", "shop-a", key).POST(body("pay")).build());
        HttpResponse<byte[]> replay = bytes(request("/payments/", "shop-a", key).POST(body("pay")).build());

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
    protected void aHandlersOwn5xxIsRecordedWithItsWritesAndReplayed() throws Exception {
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
    protected void aHandlerThatThrowsRollsBackItsWritesWithTheRecordAndTheRetryRunsAgain() throws Exception {
        String key = key();
        HttpResponse<String> failed = send(request("/payments/", "shop-a", key).POST(body("fail")).build());

        assertThat(failed.statusCode()).isEqualTo(500);
        assertThat(failed.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(Jta.payments(dataSource, "shop-a", key)).as("the handler's write was rolled back").isZero();
        assertThat(Jta.recorded(dataSource, "shop-a", key)).as("and the key's claim with it").isFalse();

        HttpResponse<String> retry = send(request("/payments/", "shop-a", key).POST(body("fail")).build());
        assertThat(retry.statusCode()).isEqualTo(500);
        assertThat(server.runs("shop-a", key)).as("the retry ran the handler again").isEqualTo(2);
        assertThat(Jta.payments(dataSource, "shop-a", key)).isZero();
    }

    @Test
    protected void concurrentDuplicatesExecuteOnce() throws Exception {
        client.concurrentDuplicatesExecuteOnce("/payments/", 201, server::runs, dataSource);
    }

    @Test
    protected void theRetryingClientDrives200OperationsThroughLostAnswersOneExecutionEach() throws Exception {
        client.retryingClientDrives200OperationsThroughLostAnswers("/payments/", every -> server.lost().loseEvery = every, server::runs,
                dataSource);
    }

    @Test
    protected void withoutTheFilterTheSameLostAnswersMakeAPaymentEach() throws Exception {
        String key = key();
        server.lost().losses.put("shop-a/" + key, new AtomicInteger(2));
        RetryingHttpClient retrying = RetryingHttpClient.builder(client.http())
                .retryPolicy(RetryPolicy.builder().maxAttempts(5).backoff(Duration.ofMillis(5), Duration.ofMillis(20)).build()).build();

        HttpResponse<String> response = retrying.send(request("/unprotected/", "shop-a", key).POST(body("pay")).build(),
                HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(201);
        assertThat(Jta.payments(dataSource, "shop-a", key)).as("the control: lost answers repeat the payment").isEqualTo(3);
    }

    /** @return a request from {@code client} to {@code path}, with the key header unless {@code key} is {@code null} */
    protected HttpRequest.Builder request(String path, String client, String key) {
        return this.client.request(path, client, key);
    }

    /** @return the response, its body as text */
    protected HttpResponse<String> send(HttpRequest request) throws Exception {
        return client.send(request);
    }

    /** @return the response, its body as bytes */
    protected HttpResponse<byte[]> bytes(HttpRequest request) throws Exception {
        return client.http().send(request, HttpResponse.BodyHandlers.ofByteArray());
    }
}
