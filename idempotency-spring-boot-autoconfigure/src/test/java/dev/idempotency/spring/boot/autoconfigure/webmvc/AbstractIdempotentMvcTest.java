package dev.idempotency.spring.boot.autoconfigure.webmvc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.micrometer.MicrometerIdempotencyListener;
import dev.idempotency.spring.webmvc.IdempotencyFilter;
import dev.idempotency.spring.webmvc.IdempotentEndpoint;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * {@link IdempotentEndpoint} over real HTTP: {@link PaymentsApplication} on embedded Tomcat on 127.0.0.1, a
 * random port, the JDK's HTTP client; every row of the HTTP layer's table once. Subclasses name the
 * database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractIdempotentMvcTest {

    private ConfigurableApplicationContext context;
    private JdbcTemplate jdbc;
    private URI base;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    /** @return Boot properties naming the database ({@code spring.datasource.*}) */
    abstract List<String> databaseProperties();

    @BeforeAll
    void start() {
        List<String> properties = new ArrayList<>(databaseProperties());
        properties.addAll(List.of("server.address=127.0.0.1", "server.port=0", "idempotency.create-table=true",
                "idempotency.lock-timeout=1s", "spring.main.banner-mode=off",
                "idempotency.http.replayed-headers=Content-Type,Location,Set-Cookie"));
        context = new SpringApplicationBuilder(PaymentsApplication.class).properties(properties.toArray(String[]::new)).run();
        jdbc = context.getBean(JdbcTemplate.class);
        jdbc.execute("create table if not exists mvc_payment (id varchar(36) primary key, shop varchar(64) not null,"
                + " customer varchar(64) not null, cents bigint not null)");
        base = URI.create("http://127.0.0.1:" + context.getEnvironment().getProperty("local.server.port"));
    }

    @AfterAll
    void stop() {
        if (context != null) {
            context.close();
        }
    }

    @Test
    void thePaymentRetriedCreatesOnePaymentAndTheRetryGetsTheFirstResponseByteForByte() throws Exception {
        String customer = unique("alice");
        String key = UUID.randomUUID().toString();
        HttpResponse<byte[]> first = send(pay("shop-a", key, customer, "1250"));
        HttpResponse<byte[]> retry = send(pay("shop-a", key, customer, "1250"));

        assertRan(first, 201);
        assertReplayOf(retry, first);
        assertThat(first.headers().firstValue("Location")).isPresent();
        assertThat(retry.headers().firstValue("X-Authenticated-As")).hasValue("shop-a"); // earlier filters' headers stay
        assertThat(payments(customer)).isEqualTo(1);
    }

    @Test
    void aSafeMethodIgnoresTheKeyAndRecordsNothing() throws Exception {
        String customer = unique("carol");
        HttpRequest get = authorized("shop-a", URI.create(base + "/payments?customer=" + customer))
                .header("Idempotency-Key", "get-1").GET().build();
        HttpResponse<byte[]> first = send(get);
        send(pay("shop-a", UUID.randomUUID().toString(), customer, "100"));
        HttpResponse<byte[]> second = send(get);
        assertThat(text(first)).isEqualTo("0");
        assertThat(text(second)).isEqualTo("1"); // not a replay of the first
        assertThat(second.headers().firstValue("Idempotent-Replayed")).isEmpty();
    }

    @Test
    void noKeyIs400KeyMissingAndRunsNothing() throws Exception {
        String customer = unique("dave");
        HttpResponse<byte[]> response = send(authorized("shop-a", URI.create(base + "/payments"))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString("customer=" + customer + "&cents=100")).build());
        assertProblem(response, 400, "key-missing");
        assertThat(payments(customer)).isZero();
    }

    @Test
    void aBodyOverTheLimitIs413RequestTooLargeAndRunsNothing() throws Exception {
        String customer = unique("frank");
        String padding = "x".repeat(IdempotencyFilter.DEFAULT_MAX_REQUEST_BYTES);
        HttpResponse<byte[]> response = send(pay("shop-a", UUID.randomUUID().toString(), customer, "100&note=" + padding));
        assertProblem(response, 413, "request-too-large");
        assertThat(payments(customer)).isZero();
    }

    @Test
    void aMalformedKeyIs400KeyMalformedAndRunsNothing() throws Exception {
        String customer = unique("erin");
        assertProblem(send(pay("shop-a", "has space", customer, "100")), 400, "key-malformed");
        assertProblem(send(pay("shop-a", "x".repeat(256), customer, "100")), 400, "key-malformed");
        assertThat(payments(customer)).isZero();
    }

    @Test
    void aDuplicateWhileTheFirstRunsIs409WithRetryAfterThenTheReplay() throws Exception {
        String customer = unique("slow");
        String key = UUID.randomUUID().toString();
        PaymentsApplication.entered = new CountDownLatch(1);
        PaymentsApplication.release = new CountDownLatch(1);
        CompletableFuture<HttpResponse<byte[]>> first = http.sendAsync(pay("shop-a", key, customer, "100"),
                HttpResponse.BodyHandlers.ofByteArray());
        try {
            assertThat(PaymentsApplication.entered.await(20, TimeUnit.SECONDS)).isTrue();
            HttpResponse<byte[]> duplicate = send(pay("shop-a", key, customer, "100"));
            assertProblem(duplicate, 409, "key-in-progress");
            assertThat(duplicate.headers().firstValue("Retry-After")).hasValue("1");
            assertThat(duplicate.headers().firstValue("X-Authenticated-As")).hasValue("shop-a");
        } finally {
            PaymentsApplication.release.countDown();
        }
        assertThat(first.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
        assertReplayOf(send(pay("shop-a", key, customer, "100")), first.get());
        assertThat(payments(customer)).isEqualTo(1);
    }

    @Test
    void theKeyReusedForAnotherRequestIs422AndTheFirstStillReplays() throws Exception {
        String customer = unique("frank");
        String key = UUID.randomUUID().toString();
        HttpResponse<byte[]> first = send(pay("shop-a", key, customer, "100"));
        assertProblem(send(pay("shop-a", key, customer, "999")), 422, "key-reused");
        assertReplayOf(send(pay("shop-a", key, customer, "100")), first);
        assertThat(payments(customer)).isEqualTo(1);
    }

    @Test
    void aStatusTheHandlerDecidesIsRecordedAndReplayed() throws Exception {
        String customer = unique("gina");
        String key = UUID.randomUUID().toString();
        HttpResponse<byte[]> first = send(pay("shop-a", key, customer, "0"));
        HttpResponse<byte[]> retry = send(pay("shop-a", key, customer, "0"));
        assertRan(first, 400);
        assertReplayOf(retry, first);
    }

    @Test
    void aHandlerWhoseAnnotationReleasesServerErrorsSendsIts502RollsBackAndTheRetryRunsIt() throws Exception {
        String customer = unique("provider");
        String key = UUID.randomUUID().toString();
        HttpResponse<byte[]> failed = send(pay("/release/payments", "shop-a", key, customer, "1"));
        assertRan(failed, 502);
        assertThat(text(failed)).contains("provider_unavailable");
        assertThat(payments(customer)).as("the insert rolled back with the claim").isZero();

        HttpResponse<byte[]> retry = send(pay("/release/payments", "shop-a", key, customer, "1"));
        assertRan(retry, 201);
        assertReplayOf(send(pay("/release/payments", "shop-a", key, customer, "1")), retry);
        assertThat(payments(customer)).isEqualTo(1);
    }

    @Test
    void aResponseOverTheResultLimitIs500ResponseTooLargeRolledBackAndReplayed() throws Exception {
        String customer = unique("huge");
        String key = UUID.randomUUID().toString();
        HttpResponse<byte[]> first = send(pay("/huge/payments", "shop-a", key, customer, "100"));
        String problem = text(first);

        assertThat(first.statusCode()).isEqualTo(500);
        assertThat(first.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(first.headers().firstValue("Location")).as("nothing of the handler's response shows").isEmpty();
        assertThat(problem).contains(HttpIdempotency.PROBLEM_TYPES + "response-too-large", "over the 1048576 bytes");
        assertThat(payments(customer)).as("the insert rolled back").isZero();
        for (int i = 0; i < 2; i++) {
            HttpResponse<byte[]> retry = send(pay("/huge/payments", "shop-a", key, customer, "100"));
            assertThat(retry.statusCode()).isEqualTo(500);
            assertThat(retry.headers().firstValue("Idempotent-Replayed")).as("the recorded problem, not a new run").hasValue("true");
            assertThat(text(retry)).isEqualTo(problem);
        }
        assertThat(payments(customer)).isZero();
    }

    /**
     * Thrown and left to the container (500), or resolved by Spring MVC into an error response (503);
     * the metrics name the handler's own exception either way.
     */
    @ParameterizedTest
    @CsvSource({ "flaky, 500, IllegalStateException", "refused, 503, ResponseStatusException" })
    void aHandlerThatThrowsRecordsNothingAndTheRetryRunsIt(String kind, int status, String error) throws Exception {
        String customer = unique(kind);
        String key = UUID.randomUUID().toString();
        double errorsBefore = errors(error);
        (kind.equals("flaky") ? PaymentsApplication.FLAKY : PaymentsApplication.REFUSED).set(1);
        HttpResponse<byte[]> failed = send(pay("shop-a", key, customer, "100"));
        assertThat(failed.statusCode()).isEqualTo(status);
        assertThat(payments(customer)).isZero(); // the insert rolled back with the key's claim
        assertThat(context.getBean(MeterRegistry.class).getMeters()) // the library's meters, not Boot's own beside them
                .filteredOn(meter -> meter.getId().getName().startsWith("idempotency."))
                .flatMap(meter -> meter.getId().getTags())
                .noneMatch(tag -> tag.getKey().equals("error") && !tag.getValue().equals("IllegalStateException")
                        && !tag.getValue().equals("ResponseStatusException")
                        && !tag.getValue().equals("ReleaseKeyException")); // a released 5xx (/release/payments)
        assertThat(errors(error)).isEqualTo(errorsBefore + 1);
        assertRan(send(pay("shop-a", key, customer, "100")), 201);
        assertThat(payments(customer)).isEqualTo(1);
    }

    /** The engine's count of exceptions of this type that reached the filter. */
    private double errors(String type) {
        Counter counter = context.getBean(MeterRegistry.class).find(MicrometerIdempotencyListener.ERRORS).tag("error", type).counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void oneClientsKeySentByAnotherRunsAsTheOthersOwn() throws Exception {
        String customer = unique("henry");
        String key = UUID.randomUUID().toString();
        HttpResponse<byte[]> a = send(pay("shop-a", key, customer, "100"));
        HttpResponse<byte[]> b = send(pay("shop-b", key, customer, "100"));
        assertRan(b, 201);
        assertThat(b.body()).isNotEqualTo(a.body());
        assertThat(payments(customer)).isEqualTo(2);
    }

    /** Ordinary user names that are not valid scopes (a space, a non-ASCII letter) still pay once and replay. */
    @Test
    void aUserNameThatIsNotAValidScopeStillGetsItsOwnReplays() throws Exception {
        for (String shop : List.of("Ada Lovelace", "Zoë")) {
            String customer = unique("jane");
            String key = UUID.randomUUID().toString();
            HttpResponse<byte[]> first = send(pay(shop, key, customer, "100"));
            HttpResponse<byte[]> retry = send(pay(shop, key, customer, "100"));
            assertRan(first, 201);
            assertReplayOf(retry, first);
            assertThat(payments(customer)).as(shop).isEqualTo(1);
        }
    }

    @Test
    void withoutAnAuthenticatedClientIs401AndRunsNothing_butASafeMethodPasses() throws Exception {
        String customer = unique("ivan");
        HttpResponse<byte[]> response = send(HttpRequest.newBuilder(URI.create(base + "/payments"))
                .header("Idempotency-Key", UUID.randomUUID().toString())
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString("customer=" + customer + "&cents=100")).build());
        assertProblem(response, 401, "unauthenticated");
        assertThat(payments(customer)).isZero();
        HttpResponse<byte[]> get = send(HttpRequest.newBuilder(URI.create(base + "/payments?customer=" + customer)).GET().build());
        assertThat(get.statusCode()).isEqualTo(200); // a safe method needs no client: nothing is recorded for it
    }

    @Test
    void theReplayedHeadersPropertyReplaysTheFirstResponsesCookie() throws Exception {
        String key = UUID.randomUUID().toString();
        HttpRequest signIn = authorized("shop-a", URI.create(base + "/logins")).header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.noBody()).build();
        HttpResponse<byte[]> first = send(signIn);
        HttpResponse<byte[]> retry = send(signIn);
        assertRan(first, 201);
        assertThat(first.headers().firstValue("Set-Cookie")).hasValueSatisfying(c -> assertThat(c).startsWith("login="));
        assertReplayOf(retry, first);
        assertThat(retry.headers().allValues("Set-Cookie")).isEqualTo(first.headers().allValues("Set-Cookie"));
    }

    @Test
    void aMethodWithoutTheAnnotationIsLeftAlone() throws Exception {
        HttpResponse<byte[]> response = send(HttpRequest.newBuilder(URI.create(base + "/unprotected/payments"))
                .POST(HttpRequest.BodyPublishers.noBody()).build());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(text(response)).isEqualTo("not idempotent");
    }

    private HttpRequest pay(String shop, String key, String customer, String cents) {
        return pay("/payments", shop, key, customer, cents);
    }

    private HttpRequest pay(String path, String shop, String key, String customer, String cents) {
        return authorized(shop, URI.create(base + path))
                .header("Idempotency-Key", key)
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString("customer=" + customer + "&cents=" + cents))
                .build();
    }

    private static HttpRequest.Builder authorized(String shop, URI uri) {
        String credentials = Base64.getEncoder().encodeToString((shop + ":secret").getBytes(StandardCharsets.UTF_8));
        return HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).header("Authorization", "Basic " + credentials);
    }

    private HttpResponse<byte[]> send(HttpRequest request) throws Exception {
        return http.send(request, HttpResponse.BodyHandlers.ofByteArray());
    }

    private static String text(HttpResponse<byte[]> response) {
        return new String(response.body(), StandardCharsets.UTF_8);
    }

    /** The handler ran for this request: its own response, not a replay. */
    private static void assertRan(HttpResponse<byte[]> response, int status) {
        assertThat(response.statusCode()).as(text(response)).isEqualTo(status);
        assertThat(response.headers().firstValue("Idempotent-Replayed")).isEmpty();
    }

    /** The first response again, byte for byte, with the replayed headers and {@code Idempotent-Replayed: true}. */
    private static void assertReplayOf(HttpResponse<byte[]> retry, HttpResponse<byte[]> first) {
        assertThat(retry.statusCode()).isEqualTo(first.statusCode());
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(retry.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
        assertThat(retry.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
    }

    private static void assertProblem(HttpResponse<byte[]> response, int status, String type) {
        assertThat(response.statusCode()).as(text(response)).isEqualTo(status);
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("application/problem+json"));
        assertThat(text(response)).contains("\"type\":\"https://github.com/idempotency/idempotency-java/blob/main/docs/http.md#" + type + "\"");
    }

    private int payments(String customer) {
        return jdbc.queryForObject("select count(*) from mvc_payment where customer = ?", Integer.class, customer);
    }

    private static String unique(String customer) {
        return customer + "-" + UUID.randomUUID().toString().substring(0, 8);
    }
}
