package dev.idempotency.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.BasicAuthenticator;
import com.sun.net.httpserver.HttpServer;
import dev.idempotency.Idempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.jdbc.JdbcTransactions;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * What the JDK adapter answers around the layer's table: a malformed header, a body over the limit,
 * user names that are not valid scopes, a scope function of the server's that returns an invalid
 * scope. Over real sockets on 127.0.0.1, on an in-memory H2 database; the raw socket reads the whole
 * response, so a connection dropped or reset instead of answered fails.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class JdkHttpHandlerTest {

    private HttpServer server;
    private JdbcDataSource dataSource;
    private final ExecutorService threads = Executors.newFixedThreadPool(4);
    private final AtomicInteger runs = new AtomicInteger();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeAll
    void start() throws Exception {
        dataSource = new JdbcDataSource();
        dataSource.setURL("jdbc:h2:mem:jdk-handler-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        JdbcIdempotencyStore store = JdbcIdempotencyStore.ofDefaults();
        store.createTableIfMissing(dataSource);
        ManagedIdempotency<Connection> managed = ManagedIdempotency.of(Idempotency.of(store), JdbcTransactions.of(dataSource));
        HttpIdempotency<Connection> layer = HttpIdempotency.builder(managed).build();

        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(threads);
        server.createContext("/payments", JdkHttpHandler.builder(layer, exchange -> "shop-a").maxRequestBytes(4096)
                .transactional((request, tx) -> {
                    runs.incrementAndGet();
                    return Response.of(201).withBody("application/json", "{\"id\":\"" + UUID.randomUUID() + "\"}");
                }));
        server.createContext("/scoped/payments", JdkHttpHandler.builder(layer, exchange -> exchange.getRequestHeaders().getFirst("X-Scope"))
                .transactional((request, tx) -> {
                    runs.incrementAndGet();
                    return Response.of(201).withBody("application/json", "{\"id\":\"" + UUID.randomUUID() + "\"}");
                }));
        server.createContext("/users/payments", JdkHttpHandler.builder(layer, JdkHttpHandler.authenticatedUser())
                .transactional((request, tx) -> {
                    runs.incrementAndGet();
                    return Response.of(201).withBody("application/json", "{\"id\":\"" + UUID.randomUUID() + "\"}");
                }))
                .setAuthenticator(new BasicAuthenticator("payments", StandardCharsets.UTF_8) {
                    @Override
                    public boolean checkCredentials(String user, String password) {
                        return password.equals("secret");
                    }
                });
        server.start();
    }

    @AfterAll
    void stop() {
        server.stop(0);
        threads.shutdownNow();
    }

    @Test
    void aNulInAHeaderIsAnswered400WithAProblemAndNothingRuns() throws Exception {
        int before = runs.get();
        String response = raw("POST /payments HTTP/1.1\r\nHost: 127.0.0.1\r\nIdempotency-Key: k-" + UUID.randomUUID()
                + "\r\nX-Note: a\u0000b\r\nContent-Length: 3\r\nConnection: close\r\n\r\n", "pay".getBytes(StandardCharsets.US_ASCII));

        assertThat(response).startsWith("HTTP/1.1 400 ");
        assertThat(response).containsIgnoringCase("Content-Type: application/problem+json")
                .contains(HttpIdempotency.PROBLEM_TYPES + "request-malformed").containsIgnoringCase("header X-Note holds");
        assertThat(runs.get()).isEqualTo(before);
    }

    @Test
    void aBodyOverTheLimitGetsAWhole413OverTheJdkClientEveryTimeAndTheRetryingClientSendsItOnce() throws Exception {
        byte[] tenMegabytes = new byte[10 * 1024 * 1024];
        int before = runs.get();
        for (int i = 0; i < 8; i++) { // the reset was intermittent: 1 in 5
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri("/payments")).header("Idempotency-Key", "k-" + i)
                    .POST(HttpRequest.BodyPublishers.ofByteArray(tenMegabytes)).build(), HttpResponse.BodyHandlers.ofString());

            assertThat(response.statusCode()).as("try %d", i).isEqualTo(413);
            assertThat(response.body()).contains(HttpIdempotency.PROBLEM_TYPES + "request-too-large");
        }
        AtomicInteger sent = new AtomicInteger();
        RetryingHttpClient retrying = RetryingHttpClient.builder(http).retryPolicy(AbstractHttpTest.fastRetries(5))
                .listener(new RetryingHttpClient.Listener() {
                    @Override
                    public void onSend(HttpRequest request, int attempt) {
                        sent.incrementAndGet();
                    }
                }).build();
        HttpResponse<String> once = retrying.send(HttpRequest.newBuilder(uri("/payments"))
                .POST(HttpRequest.BodyPublishers.ofByteArray(tenMegabytes)).build(), HttpResponse.BodyHandlers.ofString());

        assertThat(once.statusCode()).isEqualTo(413);
        assertThat(sent.get()).as("a 413 is the answer: never sent again").isEqualTo(1);
        assertThat(runs.get()).isEqualTo(before);
    }

    @Test
    void aBodyOverTheLimitGetsAWhole413OverARawSocketEveryTime() throws Exception {
        byte[] tenMegabytes = new byte[10 * 1024 * 1024];
        for (int i = 0; i < 5; i++) {
            String response = raw("POST /payments HTTP/1.1\r\nHost: 127.0.0.1\r\nIdempotency-Key: k-" + i + "\r\nContent-Length: "
                    + tenMegabytes.length + "\r\n\r\n", tenMegabytes);

            assertThat(response).as("try %d", i).startsWith("HTTP/1.1 413 ").containsIgnoringCase("Connection: close")
                    .endsWith("\"detail\":\"The request body is over 4096 bytes.\"}");
        }
    }

    @Test
    void aScopeTheServerMapsWrongLeavesSafeMethodsAloneAndRefusesTheOthersWithoutAdvisingARetry() throws Exception {
        int before = runs.get();
        HttpResponse<String> get = http.send(HttpRequest.newBuilder(uri("/scoped/payments")).header("X-Scope", "Ada Lovelace").GET().build(),
                HttpResponse.BodyHandlers.ofString());

        assertThat(get.statusCode()).as("a safe method needs no scope: " + get.body()).isEqualTo(201);
        assertThat(runs.get()).isEqualTo(before + 1);

        HttpResponse<String> post = http.send(HttpRequest.newBuilder(uri("/scoped/payments")).header("X-Scope", "Ada Lovelace")
                .header("Idempotency-Key", "k-" + UUID.randomUUID()).POST(HttpRequest.BodyPublishers.ofString("pay")).build(),
                HttpResponse.BodyHandlers.ofString());

        assertThat(post.statusCode()).isEqualTo(500);
        assertThat(post.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(post.body()).contains(HttpIdempotency.PROBLEM_TYPES + "scope-invalid", "Nothing ran")
                .doesNotContainIgnoringCase("retry it").doesNotContainIgnoringCase("retry with");
        assertThat(runs.get()).isEqualTo(before + 1);
    }

    @Test
    void everyUserNameIsAScopeAndEachUsersRetryGetsItsOwnReplay() throws Exception {
        String key = "k-" + UUID.randomUUID();
        for (String user : List.of("shop-a", "Ada Lovelace", "Zo\u00eb", "x".repeat(65), "Grace Hopper")) {
            int before = runs.get();
            HttpResponse<String> first = http.send(user(user, key), HttpResponse.BodyHandlers.ofString());
            HttpResponse<String> retry = http.send(user(user, key), HttpResponse.BodyHandlers.ofString());

            assertThat(first.statusCode()).as("%s: %s", user, first.body()).isEqualTo(201);
            assertThat(first.headers().firstValue("Idempotent-Replayed")).as("%s never gets another user's answer", user).isEmpty();
            assertThat(retry.headers().firstValue("Idempotent-Replayed")).as(user).hasValue("true");
            assertThat(retry.body()).isEqualTo(first.body());
            assertThat(runs.get()).isEqualTo(before + 1);
            assertThat(recordedScopes(key)).contains(HttpIdempotency.principalScope(user));
        }
        assertThat(recordedScopes(key)).as("a valid name is its own scope, as before").contains("shop-a").hasSize(5);
    }

    @Test
    void principalScopeKeepsValidNamesAndMapsEveryOtherNameToAStableDigestNoValidNameKeeps() {
        assertThat(HttpIdempotency.principalScope("shop-a")).isEqualTo("shop-a");
        assertThat(HttpIdempotency.principalScope("x".repeat(64))).isEqualTo("x".repeat(64));
        String ada = HttpIdempotency.principalScope("Ada Lovelace");
        assertThat(ada).matches("~[A-Za-z0-9_-]{43}").isEqualTo(HttpIdempotency.principalScope("Ada Lovelace"))
                .isNotEqualTo(HttpIdempotency.principalScope("Ada  Lovelace"));
        assertThat(HttpIdempotency.principalScope(ada)).as("a valid name of the digest's form cannot take Ada's scope")
                .matches("~[A-Za-z0-9_-]{43}").isNotEqualTo(ada);
        for (String name : List.of("", " ", "Zo\u00eb", "x".repeat(65), "tab\tname")) {
            assertThat(HttpIdempotency.principalScope(name)).as("'%s'", name).matches("~[A-Za-z0-9_-]{43}");
        }
    }

    // ---- helpers -------------------------------------------------------------------------------------

    private List<String> recordedScopes(String key) throws Exception {
        List<String> scopes = new ArrayList<>();
        try (Connection c = dataSource.getConnection();
             PreparedStatement select = c.prepareStatement("SELECT scope FROM idempotency_record WHERE key_id = ?")) {
            select.setString(1, key);
            try (ResultSet rs = select.executeQuery()) {
                while (rs.next()) {
                    scopes.add(rs.getString(1));
                }
            }
        }
        return scopes;
    }

        private HttpRequest user(String user, String key) {
        String credentials = Base64.getEncoder().encodeToString((user + ":secret").getBytes(StandardCharsets.UTF_8));
        return HttpRequest.newBuilder(uri("/users/payments")).header("Authorization", "Basic " + credentials)
                .header("Idempotency-Key", key).POST(HttpRequest.BodyPublishers.ofString("pay")).build();
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + path);
    }

    /**
     * Sends a request over a raw socket, the body from another thread (the server may answer before
     * it has read it all), and reads the response until the server closes the connection.
     *
     * @return the whole response, as ISO-8859-1 text
     * @throws IOException if the connection is reset or lost before the response ends
     */
    private String raw(String head, byte[] body) throws Exception {
        try (Socket socket = new Socket("127.0.0.1", server.getAddress().getPort())) {
            socket.setSoTimeout(30_000);
            OutputStream out = socket.getOutputStream();
            out.write(head.getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            Thread writer = new Thread(() -> {
                try {
                    for (int at = 0; at < body.length; at += 64 * 1024) {
                        out.write(body, at, Math.min(64 * 1024, body.length - at));
                    }
                    out.flush();
                } catch (IOException stopped) {
                    // the server stopped reading: what it answered is what the test checks
                }
            });
            writer.start();
            ByteArrayOutputStream response = new ByteArrayOutputStream();
            InputStream in = socket.getInputStream();
            in.transferTo(response);
            writer.join(30_000);
            return response.toString(StandardCharsets.ISO_8859_1);
        }
    }
}
