package dev.idempotency.jakarta.testing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.RetryPolicy;
import dev.idempotency.http.RetryingHttpClient;
import java.net.URI;
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
import java.util.function.Function;
import java.util.function.IntConsumer;
import javax.sql.DataSource;

/**
 * The tests' client of a payments server on 127.0.0.1 ({@code java.net.http}): its requests, with
 * the client in {@code X-Client}, and the scenarios that the servlet and Jakarta REST tests share.
 */
public final class TestClient {

    /** Counts a server's runs of a key's handler, rolled-back ones included. */
    @FunctionalInterface
    public interface Runs {
        /** @return the runs for {@code scope} and {@code key} */
        int of(String scope, String key);
    }

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final Function<String, URI> uri;

    /** @param uri the server's address of a path */
    public TestClient(Function<String, URI> uri) {
        this.uri = uri;
    }

    /** @return the underlying client */
    public HttpClient http() {
        return http;
    }

    /** @return a request to {@code path} from {@code client}, with the key header unless {@code key} is {@code null} */
    public HttpRequest.Builder request(String path, String client, String key) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri.apply(path)).timeout(Duration.ofSeconds(30)).header("X-Client", client);
        return key == null ? b : b.header("Idempotency-Key", key);
    }

    /** @return the response, its body as text */
    public HttpResponse<String> send(HttpRequest request) throws Exception {
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    /** @return a body of {@code text} */
    public static HttpRequest.BodyPublisher body(String text) {
        return HttpRequest.BodyPublishers.ofString(text);
    }

    /** @return a new key */
    public static String key() {
        return UUID.randomUUID().toString();
    }

    /**
     * Eight concurrent duplicates of {@code pay} to {@code path}: each answered {@code created} or
     * 409, the created ones alike, the handler run once and one payment committed.
     */
    public void concurrentDuplicatesExecuteOnce(String path, int created, Runs runs, DataSource dataSource) throws Exception {
        String key = key();
        List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            all.add(http.sendAsync(request(path, "shop-a", key).POST(body("pay")).build(), HttpResponse.BodyHandlers.ofString()));
        }
        List<String> bodies = new ArrayList<>();
        for (CompletableFuture<HttpResponse<String>> f : all) {
            HttpResponse<String> r = f.get(60, TimeUnit.SECONDS);
            assertThat(r.statusCode()).as(r.body()).isIn(created, 409);
            if (r.statusCode() == created) {
                bodies.add(r.body());
            }
        }
        assertThat(bodies).isNotEmpty().allMatch(bodies.get(0)::equals);
        assertThat(runs.of("shop-a", key)).isEqualTo(1);
        assertThat(Jta.payments(dataSource, "shop-a", key)).isEqualTo(1);
    }

    /**
     * {@link RetryingHttpClient} sends 200 operations to {@code path} while the server loses every
     * third answer ({@code loseEvery} sets it, and 0 stops it): every operation answered 201 with its
     * own payment, each key's handler run once and its payment committed once.
     */
    public void retryingClientDrives200OperationsThroughLostAnswers(String path, IntConsumer loseEvery, Runs runs,
                                                                   DataSource dataSource) throws Exception {
        String client = "lossy-" + UUID.randomUUID().toString().substring(0, 8);
        loseEvery.accept(3);
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
                HttpResponse<String> response = retrying.send(request(path, client, key).POST(body("pay " + i)).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
                ids.add(response.body());
            }
        } finally {
            loseEvery.accept(0);
        }
        assertThat(ids).hasSize(200);
        assertThat(sent.get()).as("answers were lost and retried").isGreaterThan(250);
        for (String key : keys) {
            assertThat(runs.of(client, key)).as("executions of %s", key).isEqualTo(1);
            assertThat(Jta.payments(dataSource, client, key)).as("payments of %s", key).isEqualTo(1);
        }
    }
}
