package dev.idempotency.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The retrying client against a server on 127.0.0.1 that answers from a script: each request takes
 * the next status and {@code Retry-After}. What it sent, and when, is checked from the server's side.
 */
class RetryingHttpClientTest {

    /** A scripted answer: status, Retry-After (null for none) and the type of its problem body (null for no body). */
    private record Scripted(int status, String retryAfter, String problem) {
        Scripted(int status, String retryAfter) {
            this(status, retryAfter, null);
        }
    }

    private HttpServer server;
    private final Queue<Scripted> script = new ConcurrentLinkedQueue<>();
    private final List<String> keysReceived = new CopyOnWriteArrayList<>();
    private final List<String> pauses = new ArrayList<>();
    private final Instant now = Instant.parse("2030-01-01T00:00:00Z");

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            try (exchange) {
                keysReceived.add(String.valueOf(exchange.getRequestHeaders().getFirst("Idempotency-Key")));
                Scripted next = script.poll();
                if (next.retryAfter() != null) {
                    exchange.getResponseHeaders().add("Retry-After", next.retryAfter());
                }
                if (next.problem() == null) {
                    exchange.sendResponseHeaders(next.status(), -1);
                    return;
                }
                byte[] body = ("{\"title\":\"Scripted\",\"status\":" + next.status() + ",\"detail\":\"a \\\"type\\\": in the text\","
                        + " \"ext\":{\"type\":\"nested\"}, \"type\" : \"" + next.problem() + "\"}").getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().add("Content-Type", "application/problem+json; charset=utf-8");
                exchange.sendResponseHeaders(next.status(), body.length);
                exchange.getResponseBody().write(body);
            }
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    private RetryingHttpClient client(int attempts) {
        return RetryingHttpClient.builder(HttpClient.newHttpClient()).retryPolicy(AbstractHttpTest.fastRetries(attempts))
                .clock(() -> now)
                .listener(new RetryingHttpClient.Listener() {
                    @Override
                    public void onRetry(HttpRequest request, int attempt, String reason, Duration pause) {
                        pauses.add(reason + " -> " + pause.toMillis() / 1000 + "s");
                    }
                }).build();
    }

    private HttpResponse<Void> post(RetryingHttpClient client) throws Exception {
        URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/charges");
        return client.send(HttpRequest.newBuilder(uri).POST(HttpRequest.BodyPublishers.ofString("x")).build(),
                HttpResponse.BodyHandlers.discarding());
    }

    @Test
    void retryAfterInSecondsOrAsAnHttpDateIsHonouredWithOneKeyThroughout() throws Exception {
        String inOneSecond = DateTimeFormatter.RFC_1123_DATE_TIME.format(now.plusSeconds(1).atZone(ZoneOffset.UTC));
        script.addAll(List.of(new Scripted(503, "1"), new Scripted(429, inOneSecond), new Scripted(409, null), new Scripted(201, null)));

        HttpResponse<Void> response = post(client(5));

        assertThat(response.statusCode()).isEqualTo(201);
        assertThat(keysReceived).hasSize(4).doesNotContain("null").allMatch(keysReceived.get(0)::equals);
        assertThat(response.request().headers().firstValue("Idempotency-Key")).hasValue(keysReceived.get(0));
        assertThat(pauses).containsExactly("status 503 -> 1s", "status 429 -> 1s", "status 409 -> 0s");
    }

    @Test
    void retryAfterAsAnRfc850OrAnAsctimeDateIsHonouredAsTheImfFixdateIs() throws Exception {
        // RFC 9110 section 5.6.7: a recipient accepts all three forms; a two-digit year more than 50 years ahead is in the past
        String rfc850 = DateTimeFormatter.ofPattern("EEEE, dd-MMM-yy HH:mm:ss 'GMT'", Locale.ENGLISH)
                .format(now.plusSeconds(1).atZone(ZoneOffset.UTC));
        String asctime = DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss yyyy", Locale.ENGLISH)
                .format(now.plusSeconds(2).atZone(ZoneOffset.UTC));
        String rfc850Past = "Sunday, 06-Nov-94 08:49:37 GMT"; // 1994, not 2094: no pause beyond the backoff
        script.addAll(List.of(new Scripted(503, rfc850), new Scripted(503, asctime), new Scripted(503, rfc850Past),
                new Scripted(201, null)));

        HttpResponse<Void> response = post(client(5));

        assertThat(response.statusCode()).isEqualTo(201);
        assertThat(List.of(rfc850, asctime)).containsExactly("Tuesday, 01-Jan-30 00:00:01 GMT", "Tue Jan  1 00:00:02 2030");
        assertThat(pauses).containsExactly("status 503 -> 1s", "status 503 -> 2s", "status 503 -> 0s");
    }

    @Test
    void aRetryAfterBeyondTheLimitAndTheLastAttemptReturnTheResponse() throws Exception {
        script.add(new Scripted(503, "3600"));
        assertThat(post(client(5)).statusCode()).as("an hour is over the 60-second limit: no retry").isEqualTo(503);
        assertThat(keysReceived).hasSize(1);

        keysReceived.clear();
        script.addAll(List.of(new Scripted(500, null), new Scripted(502, null), new Scripted(504, null)));
        assertThat(post(client(3)).statusCode()).as("the last of three attempts").isEqualTo(504);
        assertThat(keysReceived).hasSize(3);
    }

    @Test
    void anAnswerThatIsNotRetryableIsReturnedAtOnce() throws Exception {
        for (int status : new int[] {200, 201, 302, 400, 401, 404, 422}) {
            keysReceived.clear();
            script.add(new Scripted(status, "1"));
            assertThat(post(client(5)).statusCode()).isEqualTo(status);
            assertThat(keysReceived).as("status %d", status).hasSize(1);
        }
    }

    @Test
    void aSafeMethodGetsNoKeyAndAKeyOfTheCallersIsKept() throws Exception {
        URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/charges");
        script.addAll(List.of(new Scripted(200, null), new Scripted(503, null), new Scripted(201, null)));

        client(5).send(HttpRequest.newBuilder(uri).GET().build(), HttpResponse.BodyHandlers.discarding());
        client(5).send(HttpRequest.newBuilder(uri).header("Idempotency-Key", "order-42").POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.discarding());

        assertThat(keysReceived).containsExactly("null", "order-42", "order-42");
    }

    @Test
    void aPermanentProblemOfTheLayerIsTheFinalAnswerAndATransientOneIsRetried() throws Exception {
        for (String permanent : List.of("scope-invalid", "operation-failed", "response-too-large")) {
            keysReceived.clear();
            script.clear();
            script.addAll(List.of(new Scripted(500, null, HttpIdempotency.PROBLEM_TYPES + permanent), new Scripted(201, null)));

            HttpResponse<String> response = postForText(client(5));

            assertThat(response.statusCode()).as(permanent).isEqualTo(500);
            assertThat(response.body()).as("the caller's body handler still gets the body").contains(permanent);
            assertThat(keysReceived).as("%s: no retry can mend it", permanent).hasSize(1);
        }
        for (Scripted transientProblem : List.of(new Scripted(500, null, HttpIdempotency.PROBLEM_TYPES + "internal-error"),
                new Scripted(503, "1", HttpIdempotency.PROBLEM_TYPES + "store-unavailable"),
                new Scripted(409, "1", HttpIdempotency.PROBLEM_TYPES + "key-in-progress"),
                new Scripted(500, null, "https://example.com/problems/scope-invalid"), new Scripted(502, null, "about:blank"))) {
            keysReceived.clear();
            script.clear();
            script.addAll(List.of(transientProblem, new Scripted(201, null)));

            assertThat(postForText(client(5)).statusCode()).as(transientProblem.problem()).isEqualTo(201);
            assertThat(keysReceived).as(transientProblem.problem()).hasSize(2);
        }
    }

    @Test
    void aPermanentProblemReachesAStreamingBodyHandlerWhole() throws Exception {
        script.addAll(List.of(new Scripted(500, null, HttpIdempotency.PROBLEM_TYPES + "scope-invalid"), new Scripted(201, null)));
        URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/charges");

        HttpResponse<java.io.InputStream> response = client(5).send(HttpRequest.newBuilder(uri)
                .POST(HttpRequest.BodyPublishers.ofString("x")).build(), HttpResponse.BodyHandlers.ofInputStream());

        try (java.io.InputStream body = response.body()) {
            assertThat(new String(body.readAllBytes(), StandardCharsets.UTF_8)).endsWith("scope-invalid\"}");
        }
        assertThat(keysReceived).hasSize(1);
    }

    private HttpResponse<String> postForText(RetryingHttpClient client) throws Exception {
        URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/charges");
        return client.send(HttpRequest.newBuilder(uri).POST(HttpRequest.BodyPublishers.ofString("x")).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
