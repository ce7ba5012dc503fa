package dev.idempotency.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The HTTP mapping of section 10 of docs/contract.md, over real HTTP on 127.0.0.1: the JDK's server
 * with the layer in each of its modes, {@code java.net.http} as the client, a real database; no
 * mocks. Each database's test is a subclass that supplies the data source.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractHttpTest {

    private PaymentsServer server;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** @return the database of this run; closed by the subclass if it needs closing */
    abstract DataSource dataSource() throws Exception;

    @BeforeAll
    void start() throws Exception {
        server = new PaymentsServer(dataSource());
    }

    @AfterAll
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    // ---- each row of the status table ---------------------------------------------------------------

    @Test
    void aSafeMethodIgnoresTheKeyAndIsNotRecorded() throws Exception {
        String key = key();
        HttpResponse<String> first = send(request("/payments", "shop-a", key).GET().build());
        HttpResponse<String> second = send(request("/payments", "shop-a", key).GET().build());

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(second.statusCode()).isEqualTo(201);
        assertThat(second.body()).as("the handler ran again: a safe request is not replayed").isNotEqualTo(first.body());
        assertThat(second.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(server.runs("shop-a", key)).isEqualTo(2);
        assertThat(server.recorded("shop-a", key)).isFalse();
    }

    @Test
    void aMissingKeyIsRefusedWith400AndAProblemAndNothingRuns() throws Exception {
        HttpResponse<String> response = send(request("/payments", "shop-a", null).POST(body("pay")).build());

        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(response.body()).contains("\"type\":\"" + HttpIdempotency.PROBLEM_TYPES + "key-missing\"", "\"status\":400",
                "Idempotency-Key");
        assertThat(server.runs("shop-a", "null")).isZero();
    }

    @Test
    void aMissingKeyRunsUnkeyedWhereNoneIsRequired() throws Exception {
        HttpResponse<String> response = send(request("/optional/payments", "shop-opt", null).POST(body("pay")).build());

        assertThat(response.statusCode()).isEqualTo(201);
        assertThat(server.runs("shop-opt", "null")).isEqualTo(1);
    }

    @Test
    void aMalformedKeyIsRefusedWith400NamingTheKeyAndIsNeverRecorded() throws Exception {
        for (String malformed : List.of("has space", "x".repeat(256), "\"unterminated", "\"in\"side\"", "\"back\\slash\"")) {
            HttpResponse<String> response = send(HttpRequest.newBuilder(server.uri("/payments")).header("X-Client", "shop-a")
                    .header("Idempotency-Key", malformed).POST(body("pay")).build());

            assertThat(response.statusCode()).as("key '%s'", malformed).isEqualTo(400);
            assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
            assertThat(response.body()).contains(HttpIdempotency.PROBLEM_TYPES + "key-malformed", "\"idempotencyKey\":");
            assertThat(server.runs("shop-a", malformed)).isZero();
        }
        HttpResponse<String> twice = send(HttpRequest.newBuilder(server.uri("/payments")).header("X-Client", "shop-a")
                .header("Idempotency-Key", "k1").header("Idempotency-Key", "k2").POST(body("pay")).build());
        assertThat(twice.statusCode()).isEqualTo(400);
        assertThat(twice.body()).contains("2 Idempotency-Key headers");
    }

    @Test
    void aLayerThatTakesUuidsOnlyRefusesACounterOrATimestampWith400NamingTheRule() throws Exception {
        for (String notUuid : List.of("1", "2", "1764687600000", "c232ab00-9414-11ec-b3c8-9f6bdeced846")) {
            HttpResponse<String> response = send(request("/uuid/payments", "shop-uuid", notUuid).POST(body("pay")).build());

            assertThat(response.statusCode()).as("key '%s'", notUuid).isEqualTo(400);
            assertThat(response.body()).contains(HttpIdempotency.PROBLEM_TYPES + "key-malformed", "must be a UUID");
            assertThat(server.runs("shop-uuid", notUuid)).isZero();
            assertThat(server.recorded("shop-uuid", notUuid)).isFalse();
        }
        String key = UUID.randomUUID().toString();
        assertThat(send(request("/uuid/payments", "shop-uuid", key).POST(body("pay")).build()).statusCode()).isEqualTo(201);
        assertThat(send(request("/uuid/payments", "shop-uuid", key).POST(body("pay")).build()).headers()
                .firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(server.runs("shop-uuid", key)).isEqualTo(1);
    }

    /** A browser may add an Idempotency-Key of its own; a layer reading another header never sees it. */
    @Test
    void aLayerWithAKeyHeaderOfItsOwnIgnoresABrowsersIdempotencyKey() throws Exception {
        String browsers = key();
        HttpResponse<String> refused = send(request("/own-header/payments", "shop-own", browsers).POST(body("pay")).build());
        assertThat(refused.statusCode()).as("the browser's Idempotency-Key is not the key this layer reads").isEqualTo(400);
        assertThat(refused.body()).contains(HttpIdempotency.PROBLEM_TYPES + "key-missing", "X-Payment-Key");
        assertThat(server.runs("shop-own", browsers)).isZero();

        String own = key();
        HttpRequest keyed = HttpRequest.newBuilder(server.uri("/own-header/payments")).header("X-Client", "shop-own")
                .header("X-Payment-Key", own).header("Idempotency-Key", key()).POST(body("pay")).build();
        HttpResponse<String> first = send(keyed);
        HttpResponse<String> again = send(HttpRequest.newBuilder(server.uri("/own-header/payments")).header("X-Client", "shop-own")
                .header("X-Payment-Key", own).header("Idempotency-Key", key()).POST(body("pay")).build());
        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(again.headers().firstValue("Idempotent-Replayed")).as("a new browser key, the same own key: a replay").hasValue("true");
        assertThat(again.body()).isEqualTo(first.body());
        assertThat(server.runs("shop-own", own)).isEqualTo(1);
    }

    @Test
    void aKeyInTheDraftsQuotedFormIsTheSameKeyAsTheBareOne() throws Exception {
        String key = key();
        HttpResponse<String> quoted = send(HttpRequest.newBuilder(server.uri("/payments")).header("X-Client", "shop-a")
                .header("Idempotency-Key", "\"" + key + "\"").POST(body("pay")).build());
        HttpResponse<String> bare = send(request("/payments", "shop-a", key).POST(body("pay")).build());

        assertThat(quoted.statusCode()).isEqualTo(201);
        assertThat(bare.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(bare.body()).isEqualTo(quoted.body());
    }

    @Test
    void aKeyStillInProgressIsAnswered409WithRetryAfterAndNotRecorded() throws Exception {
        String key = key();
        Held held = holdFirst("/quick/payments", key);
        HttpResponse<String> duplicate = send(held.request);

        assertThat(held.release().statusCode()).isEqualTo(201);
        assertThat(duplicate.statusCode()).isEqualTo(409);
        assertThat(duplicate.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(duplicate.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(duplicate.body()).contains(HttpIdempotency.PROBLEM_TYPES + "key-in-progress", "\"idempotencyKey\":\"" + key + "\"");
        assertThat(server.runs("shop-a", key)).as("the duplicate did not run").isEqualTo(1);
        assertThat(send(held.request).headers().firstValue("Idempotent-Replayed")).as("the 409 was not recorded: the retry replays the first").hasValue("true");
    }

    @Test
    void aLeasedKeyInProgressIsAnswered409WithRetryAfterCountingToTheLeaseEnd() throws Exception {
        String key = key();
        Held held = holdFirst("/leased/payments", key);
        HttpResponse<String> duplicate = send(held.request);

        assertThat(held.release().statusCode()).isEqualTo(201);
        assertThat(duplicate.statusCode()).isEqualTo(409);
        assertThat(duplicate.headers().firstValue("Retry-After").map(Integer::parseInt)).hasValueSatisfying(
                seconds -> assertThat(seconds).as("seconds to the end of a 3-second lease").isBetween(1, 3));
        assertThat(send(held.request).headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(server.runs("shop-a", key)).isEqualTo(1);
        assertThat(server.payments("shop-a", key)).isEqualTo(1);
    }

    @Test
    void theSameKeyWithAnotherRequestIsAnswered422AndNotRecorded() throws Exception {
        String key = key();
        HttpResponse<String> first = send(request("/payments", "shop-a", key).POST(body("pay 100")).build());
        HttpResponse<String> reused = send(request("/payments", "shop-a", key).POST(body("pay 999")).build());
        HttpResponse<String> otherTarget = send(request("/payments?currency=eur", "shop-a", key).POST(body("pay 100")).build());

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(reused.statusCode()).isEqualTo(422);
        assertThat(reused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(reused.body()).contains(HttpIdempotency.PROBLEM_TYPES + "key-reused", "\"idempotencyKey\":\"" + key + "\"");
        assertThat(otherTarget.statusCode()).as("the target is part of the fingerprint").isEqualTo(422);
        assertThat(server.runs("shop-a", key)).isEqualTo(1);
        assertThat(send(request("/payments", "shop-a", key).POST(body("pay 100")).build()).headers()
                .firstValue("Idempotent-Replayed")).as("the first request still replays").hasValue("true");
    }

    @Test
    void aReplayIsTheFirstResponseByteForByteWithTheReplayHeaderAndOnlyTheChosenHeaders() throws Exception {
        String key = key();
        HttpResponse<byte[]> first = http.send(request("/payments", "shop-a", key).POST(body("pay")).build(),
                HttpResponse.BodyHandlers.ofByteArray());
        HttpResponse<byte[]> replay = http.send(request("/payments", "shop-a", key).POST(body("pay")).build(),
                HttpResponse.BodyHandlers.ofByteArray());

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(first.headers().firstValue("Set-Cookie")).as("the first answer is the handler's, whole").isPresent();
        assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(replay.statusCode()).isEqualTo(first.statusCode());
        assertThat(replay.body()).isEqualTo(first.body());
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(replay.headers().allValues("Location")).isEqualTo(first.headers().allValues("Location"));
        assertThat(replay.headers().allValues("Content-Type")).isEqualTo(first.headers().allValues("Content-Type"));
        assertThat(replay.headers().firstValue("Set-Cookie")).as("never replayed unless asked").isEmpty();
        assertThat(replay.headers().firstValue("X-Request-Id")).as("not among the replayed headers").isEmpty();
        assertThat(server.runs("shop-a", key)).isEqualTo(1);
        assertThat(server.payments("shop-a", key)).isEqualTo(1);
    }

    @Test
    void aResponseTheHandlerDecidedIsRecordedWhateverItsStatus() throws Exception {
        String key = key();
        HttpResponse<String> declined = send(request("/payments", "shop-a", key).POST(body("decline")).build());
        HttpResponse<String> retry = send(request("/payments", "shop-a", key).POST(body("decline")).build());

        assertThat(declined.statusCode()).isEqualTo(402);
        assertThat(retry.statusCode()).isEqualTo(402);
        assertThat(retry.body()).isEqualTo(declined.body());
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(server.runs("shop-a", key)).isEqualTo(1);
    }

    @Test
    void aHandlerThatThrowsIsAnswered500RecordsNothingAndTheRetryRunsItAgain() throws Exception {
        String key = key();
        HttpResponse<String> failed = send(request("/payments", "shop-a", key).POST(body("fail-once")).build());

        assertThat(failed.statusCode()).isEqualTo(500);
        assertThat(failed.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(failed.body()).doesNotContain("the handler fails once");
        assertThat(server.recorded("shop-a", key)).as("nothing recorded").isFalse();
        assertThat(server.payments("shop-a", key)).as("the handler's write was rolled back").isZero();

        HttpResponse<String> retry = send(request("/payments", "shop-a", key).POST(body("fail-once")).build());
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(server.runs("shop-a", key)).isEqualTo(2);
        assertThat(server.payments("shop-a", key)).isEqualTo(1);
    }

    @Test
    void aFinalFailureIsRecordedAnswered500WithoutItsMessageAndReplayed() throws Exception {
        String key = key();
        HttpResponse<String> first = send(request("/final/payments", "shop-a", key).POST(body("declined-final")).build());
        HttpResponse<String> retry = send(request("/final/payments", "shop-a", key).POST(body("declined-final")).build());

        assertThat(first.statusCode()).isEqualTo(500);
        assertThat(first.body()).contains(HttpIdempotency.PROBLEM_TYPES + "operation-failed", "\"idempotencyKey\":\"" + key + "\"")
                .doesNotContain("declined");
        assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(retry.statusCode()).isEqualTo(500);
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(server.runs("shop-a", key)).isEqualTo(1);
        assertThat(server.payments("shop-a", key)).as("the handler's write was undone to its savepoint").isZero();
    }

    @Test
    void aResponseOverTheResultLimitIsAnswered500ResponseTooLargeRecordedAndNotRunAgain() throws Exception {
        String key = key();
        List<HttpResponse<String>> answers = sendThriceAndCheckTheRetriesReplayTheFirst("/payments", key, "large");

        HttpResponse<String> first = answers.get(0);
        assertThat(first.statusCode()).isEqualTo(500);
        assertThat(first.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(first.body()).contains(HttpIdempotency.PROBLEM_TYPES + "response-too-large", "over the 1048576 bytes",
                "writes were rolled back", "\"idempotencyKey\":\"" + key + "\"");
        assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(server.runs("shop-a", key)).as("the retries got the recorded problem").isEqualTo(1);
        assertThat(server.payments("shop-a", key)).as("the handler's write was rolled back").isZero();
    }

    @Test
    void aLeasedResponseOverTheResultLimitIsAnswered500ResponseTooLargeAndNotRunAgain() throws Exception {
        String key = key();
        List<HttpResponse<String>> answers = sendThriceAndCheckTheRetriesReplayTheFirst("/leased/payments", key, "large");

        HttpResponse<String> first = answers.get(0);
        assertThat(first.statusCode()).isEqualTo(500);
        assertThat(first.body()).contains(HttpIdempotency.PROBLEM_TYPES + "response-too-large", "over the 1048576 bytes",
                "The handler ran");
        assertThat(server.runs("shop-a", key)).isEqualTo(1);
        assertThat(server.payments("shop-a", key)).as("its own commit, outside the layer's transactions").isEqualTo(1);
    }

    @Test
    void theClientStopsAtAPermanentProblemOfTheLayer() throws Exception {
        AtomicInteger sent = new AtomicInteger();
        RetryingHttpClient client = RetryingHttpClient.builder(http).retryPolicy(fastRetries(5)).listener(new RetryingHttpClient.Listener() {
            @Override
            public void onSend(HttpRequest request, int attempt) {
                sent.incrementAndGet();
            }
        }).build();

        HttpResponse<String> failed = client.send(request("/final/payments", "shop-a", key()).POST(body("declined-final")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(failed.body()).contains(HttpIdempotency.PROBLEM_TYPES + "operation-failed");
        assertThat(failed.headers().firstValue("Idempotent-Replayed")).as("the first answer, not a replay").isEmpty();
        assertThat(sent.getAndSet(0)).isEqualTo(1);

        String key = key();
        HttpResponse<String> tooLarge = client.send(request("/payments", "shop-a", key).POST(body("large")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(tooLarge.body()).contains(HttpIdempotency.PROBLEM_TYPES + "response-too-large");
        assertThat(sent.get()).isEqualTo(1);
        assertThat(server.runs("shop-a", key)).isEqualTo(1);
    }

    @Test
    void aLeasedAttemptThatLostItsLeaseIsAnswered409AndTheRetryGetsTheWinnersResponse() throws Exception {
        String key = key();
        PaymentsServer.Hold hold = hold("lost-" + key);
        HttpRequest request = request("/short-lease/payments", "shop-a", key).POST(body("hold-first:lost-" + key)).build();
        CompletableFuture<HttpResponse<String>> first = sendAsync(request);
        assertThat(hold.entered.await(10, TimeUnit.SECONDS)).isTrue();
        HttpResponse<String> winner = send(request);
        for (int i = 0; i < 50 && winner.statusCode() == 409; i++) { // until the 300 ms lease has ended and is taken over
            Thread.sleep(100);
            winner = send(request);
        }
        hold.release.countDown();
        HttpResponse<String> loser = first.get(30, TimeUnit.SECONDS);

        assertThat(winner.statusCode()).isEqualTo(201);
        assertThat(loser.statusCode()).isEqualTo(409);
        assertThat(loser.headers().firstValue("Retry-After")).isPresent();
        assertThat(loser.body()).contains("took the key over");
        HttpResponse<String> retry = send(request);
        assertThat(retry.body()).isEqualTo(winner.body());
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(server.runs("shop-a", key)).isEqualTo(2);
    }

    @Test
    void theServersOwnTransactionCarriesTheRecordWithTheHandlersWrites() throws Exception {
        String key = key();
        HttpResponse<String> first = send(request("/server-tx/payments", "shop-a", key).POST(body("pay")).build());
        HttpResponse<String> replay = send(request("/server-tx/payments", "shop-a", key).POST(body("pay")).build());
        HttpResponse<String> failed = send(request("/server-tx/payments", "shop-a", key()).POST(body("fail")).build());

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(replay.body()).isEqualTo(first.body());
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(failed.statusCode()).isEqualTo(500);
        assertThat(server.payments("shop-a", key)).isEqualTo(1);
    }

    @Test
    void aRequestWithoutAnAuthenticatedClientIsAnswered401() throws Exception {
        HttpResponse<String> response = send(HttpRequest.newBuilder(server.uri("/payments")).header("Idempotency-Key", key())
                .POST(body("pay")).build());

        assertThat(response.statusCode()).isEqualTo(401);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    }

    @Test
    void aBodyOverTheLimitIsAnswered413AndNothingRuns() throws Exception {
        String key = key();
        HttpResponse<String> response = send(request("/payments", "shop-a", key).POST(body("pay " + "x".repeat(5000))).build());

        assertThat(response.statusCode()).isEqualTo(413);
        assertThat(server.runs("shop-a", key)).isZero();
    }

    // ---- scopes and concurrency ----------------------------------------------------------------------

    @Test
    void aKeyOfClientASentByClientBRunsAsBsOwn() throws Exception {
        String key = key();
        HttpResponse<String> a = send(request("/payments", "shop-a", key).POST(body("pay")).build());
        HttpResponse<String> b = send(request("/payments", "shop-b", key).POST(body("pay")).build());

        assertThat(a.statusCode()).isEqualTo(201);
        assertThat(b.statusCode()).isEqualTo(201);
        assertThat(b.headers().firstValue("Idempotent-Replayed")).as("B never gets A's response").isEmpty();
        assertThat(b.body()).contains("\"client\":\"shop-b\"").isNotEqualTo(a.body());
        assertThat(server.payments("shop-a", key)).isEqualTo(1);
        assertThat(server.payments("shop-b", key)).isEqualTo(1);
    }

    @Test
    void twoConcurrentRequestsWithOneKeyRunOnceTheOtherWaitsAndReplays() throws Exception {
        String key = key();
        Held held = holdFirst("/payments", key);
        CompletableFuture<HttpResponse<String>> second = sendAsync(held.request);
        Thread.sleep(300); // let the second reach the key's lock; if it comes later, it replays all the same

        HttpResponse<String> one = held.release();
        HttpResponse<String> two = second.get(30, TimeUnit.SECONDS);
        assertThat(one.statusCode()).isEqualTo(201);
        assertThat(two.statusCode()).isEqualTo(201);
        assertThat(two.body()).isEqualTo(one.body());
        assertThat(two.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(server.runs("shop-a", key)).isEqualTo(1);
        assertThat(server.payments("shop-a", key)).isEqualTo(1);
    }

    @Test
    void manyConcurrentRequestsWithOneKeyMakeOnePayment() throws Exception {
        String key = key();
        List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            all.add(sendAsync(request("/payments", "shop-a", key).POST(body("pay")).build()));
        }
        List<String> bodies = new ArrayList<>();
        for (CompletableFuture<HttpResponse<String>> f : all) {
            HttpResponse<String> r = f.get(30, TimeUnit.SECONDS);
            assertThat(r.statusCode()).as(r.body()).isIn(201, 409);
            if (r.statusCode() == 201) {
                bodies.add(r.body());
            }
        }
        assertThat(bodies).isNotEmpty().allMatch(bodies.get(0)::equals);
        assertThat(server.payments("shop-a", key)).isEqualTo(1);
    }

    // ---- the retrying client -------------------------------------------------------------------------

    @Test
    void theClientRetriesLostAnswersWithOneKeyAndThePaymentIsMadeOnce() throws Exception {
        String key = key();
        server.losses.put("shop-a/" + key, new AtomicInteger(2));
        AtomicInteger sent = new AtomicInteger();
        AtomicInteger generated = new AtomicInteger();
        RetryingHttpClient client = RetryingHttpClient.builder(http).retryPolicy(fastRetries(5)).keys(() -> {
                    generated.incrementAndGet();
                    return key;
                })
                .listener(new RetryingHttpClient.Listener() {
                    @Override
                    public void onSend(HttpRequest request, int attempt) {
                        sent.incrementAndGet();
                        assertThat(request.headers().firstValue("Idempotency-Key")).hasValue(key);
                    }
                }).build();

        HttpResponse<String> response = client.send(request("/payments", "shop-a", null).POST(body("pay")).build(),
                HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(201);
        assertThat(response.headers().firstValue("Idempotent-Replayed")).as("the third attempt got the replay").hasValue("true");
        assertThat(sent.get()).isEqualTo(3);
        assertThat(generated.get()).as("one key for the operation, made before the first send").isEqualTo(1);
        assertThat(server.runs("shop-a", key)).as("executions").isEqualTo(1);
        assertThat(server.payments("shop-a", key)).isEqualTo(1);
    }

    @Test
    void withoutTheLayerTheSameRetriesMakeAPaymentEach() throws Exception {
        String key = key();
        server.losses.put("shop-a/" + key, new AtomicInteger(2));
        RetryingHttpClient client = RetryingHttpClient.builder(http).keys(() -> key).retryPolicy(fastRetries(5)).build();

        HttpResponse<String> response = client.send(request("/unprotected/payments", "shop-a", null).POST(body("pay")).build(),
                HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(201);
        assertThat(server.payments("shop-a", key)).as("three sends, three payments").isEqualTo(3);
    }

    @Test
    void theClientRetriesAfterItsTimeoutAndGetsTheReplay() throws Exception {
        String key = key();
        server.delays.put("shop-a/" + key, Duration.ofMillis(1500));
        RetryingHttpClient client = RetryingHttpClient.builder(http).keys(() -> key).retryPolicy(fastRetries(3))
                .attemptTimeout(Duration.ofMillis(500)).build();

        HttpRequest untimed = HttpRequest.newBuilder(server.uri("/payments")).header("X-Client", "shop-a").POST(body("pay")).build();
        HttpResponse<String> response = client.send(untimed, HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(201);
        assertThat(response.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(server.runs("shop-a", key)).isEqualTo(1);
    }

    @Test
    void theClientRetriesA500WithTheSameKeyAndTheHandlerRunsAgain() throws Exception {
        String key = key();
        RetryingHttpClient client = RetryingHttpClient.builder(http).keys(() -> key).retryPolicy(fastRetries(3)).build();

        HttpResponse<String> response = client.send(request("/payments", "shop-a", null).POST(body("fail-once")).build(),
                HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(201);
        assertThat(server.runs("shop-a", key)).as("the failed run and the retry").isEqualTo(2);
        assertThat(server.payments("shop-a", key)).isEqualTo(1);
    }

    @Test
    void aHandlersOwn5xxIsRecordedAndTheClientStopsAtItsReplay() throws Exception {
        String key = key();
        AtomicInteger sent = new AtomicInteger();
        RetryingHttpClient client = RetryingHttpClient.builder(http).keys(() -> key).retryPolicy(fastRetries(5))
                .listener(new RetryingHttpClient.Listener() {
                    @Override
                    public void onSend(HttpRequest request, int attempt) {
                        sent.incrementAndGet();
                    }
                }).build();

        HttpResponse<String> response = client.send(request("/payments", "shop-a", null).POST(body("bad-gateway")).build(),
                HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(502);
        assertThat(response.headers().firstValue("Idempotent-Replayed")).as("the recorded answer, replayed").hasValue("true");
        assertThat(sent.get()).as("one retry: its replay says every other would replay the same").isEqualTo(2);
        assertThat(server.runs("shop-a", key)).isEqualTo(1);
        assertThat(server.payments("shop-a", key)).isEqualTo(1);
    }

    @Test
    void theClientRetriesA409AfterItsRetryAfterAndGetsTheFirstResponse() throws Exception {
        String key = key();
        Held held = holdFirst("/leased/payments", key);
        List<String> reasons = new ArrayList<>();
        RetryingHttpClient client = RetryingHttpClient.builder(http).retryPolicy(fastRetries(5)).listener(new RetryingHttpClient.Listener() {
            @Override
            public void onRetry(HttpRequest request, int attempt, String reason, Duration pause) {
                reasons.add(reason + " " + pause.toSeconds());
                held.hold.release.countDown();
            }
        }).build();

        HttpResponse<String> response = client.send(held.request, HttpResponse.BodyHandlers.ofString());

        assertThat(reasons).first().asString().as("paused for the Retry-After, in whole seconds").matches("status 409 [123]");
        assertThat(response.statusCode()).isEqualTo(201);
        assertThat(response.body()).isEqualTo(held.first.get(30, TimeUnit.SECONDS).body());
        assertThat(server.runs("shop-a", key)).isEqualTo(1);
    }

    @Test
    void theClientNeverRetries400Or422() throws Exception {
        AtomicInteger sent = new AtomicInteger();
        RetryingHttpClient client = RetryingHttpClient.builder(http).retryPolicy(fastRetries(5)).listener(new RetryingHttpClient.Listener() {
            @Override
            public void onSend(HttpRequest request, int attempt) {
                sent.incrementAndGet();
            }
        }).build();

        HttpResponse<String> malformed = client.send(request("/payments", "shop-a", "has space").POST(body("pay")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(malformed.statusCode()).isEqualTo(400);
        assertThat(sent.getAndSet(0)).isEqualTo(1);

        String key = key();
        client.send(request("/payments", "shop-a", key).POST(body("pay 1")).build(), HttpResponse.BodyHandlers.ofString());
        sent.set(0);
        HttpResponse<String> reused = client.send(request("/payments", "shop-a", key).POST(body("pay 2")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(reused.statusCode()).isEqualTo(422);
        assertThat(sent.get()).isEqualTo(1);
    }

    @Test
    void theClientGivesUpAfterItsAttemptsAndThrowsTheLastFailure() throws Exception {
        String key = key();
        server.losses.put("shop-a/" + key, new AtomicInteger(10));
        RetryingHttpClient client = RetryingHttpClient.builder(http).keys(() -> key).retryPolicy(fastRetries(3)).build();

        try {
            client.send(request("/payments", "shop-a", null).POST(body("pay")).build(), HttpResponse.BodyHandlers.ofString());
            throw new AssertionError("no failure");
        } catch (IOException lost) {
            assertThat(lost.getSuppressed()).as("the earlier attempts' failures").hasSize(1);
        }
        assertThat(server.payments("shop-a", key)).as("once, though no answer arrived").isEqualTo(1);
    }

    // ---- contract 15: a handler's 5xx released; the record's expiry ---------------------------------

    @Test
    void aReleased5xxRollsBackTheHandlersWritesRecordsNothingAndTheRetryRunsItAgain() throws Exception {
        String key = key();
        HttpResponse<String> failed = send(request("/release/payments", "shop-a", key).POST(body("bad-gateway-once")).build());

        assertThat(failed.statusCode()).isEqualTo(502);
        assertThat(failed.body()).as("the handler's own answer, sent").contains("provider_unavailable");
        assertThat(server.recorded("shop-a", key)).as("nothing of the key recorded").isFalse();
        assertThat(server.payments("shop-a", key)).as("the handler's write rolled back with the claim").isZero();

        HttpResponse<String> retry = send(request("/release/payments", "shop-a", key).POST(body("bad-gateway-once")).build());
        assertThat(retry.statusCode()).as("the retry ran the handler again").isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(send(request("/release/payments", "shop-a", key).POST(body("bad-gateway-once")).build()).body())
                .as("and its answer is the key's").isEqualTo(retry.body());
        assertThat(server.runs("shop-a", key)).isEqualTo(2);
        assertThat(server.payments("shop-a", key)).isEqualTo(1);
    }

    @Test
    void aReleased5xxInTheServersOwnTransactionAsksForItsRollbackAndTheRetryRunsItAgain() throws Exception {
        String key = key();
        HttpResponse<String> failed = send(request("/release/server-tx/payments", "shop-a", key).POST(body("bad-gateway-once")).build());

        assertThat(failed.statusCode()).isEqualTo(502);
        assertThat(server.recorded("shop-a", key)).as("the claim released").isFalse();
        assertThat(server.payments("shop-a", key)).as("rolled back, as rollbackRequired() said").isZero();
        HttpResponse<String> retry = send(request("/release/server-tx/payments", "shop-a", key).POST(body("bad-gateway-once")).build());
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(server.runs("shop-a", key)).isEqualTo(2);
        assertThat(server.payments("shop-a", key)).isEqualTo(1);
    }

    @Test
    void aReleased5xxInLeaseModeEndsTheLeaseAndTheRetryTakesTheKeyOverAtOnce() throws Exception {
        String key = key();
        HttpResponse<String> failed = send(request("/release/leased/payments", "shop-a", key).POST(body("bad-gateway-once")).build());
        HttpResponse<String> retry = send(request("/release/leased/payments", "shop-a", key).POST(body("bad-gateway-once")).build());

        assertThat(failed.statusCode()).isEqualTo(502);
        assertThat(retry.statusCode()).as("not 409: the lease of 3 seconds was ended, not left to run out").isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(server.runs("shop-a", key)).isEqualTo(2);
        assertThat(server.payments("shop-a", key)).as("each run's own commit stands, outside the layer's transactions").isEqualTo(2);
    }

    @Test
    void aReplayAdvertisesTheRecordsExpiryAsAnHttpDateWhereTheLayerIsAskedTo() throws Exception {
        String key = key();
        HttpResponse<String> first = send(request("/release/payments", "shop-a", key).POST(body("pay")).build());
        HttpResponse<String> replay = send(request("/release/payments", "shop-a", key).POST(body("pay")).build());

        assertThat(first.headers().firstValue(HttpIdempotency.EXPIRES_HEADER)).as("the first answer has no record yet").isEmpty();
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        java.time.Instant expiresAt = server.expiresAt("shop-a", key);
        assertThat(replay.headers().firstValue(HttpIdempotency.EXPIRES_HEADER).map(PaymentsServerDates::parse))
                .as("the record's expiry, down to the second").hasValue(expiresAt.truncatedTo(java.time.temporal.ChronoUnit.SECONDS));

        String other = key();
        send(request("/payments", "shop-a", other).POST(body("pay")).build());
        assertThat(send(request("/payments", "shop-a", other).POST(body("pay")).build()).headers()
                .firstValue(HttpIdempotency.EXPIRES_HEADER)).as("off by default").isEmpty();
    }

    @Test
    void aLeasedKeyInProgressAdvertisesItsRecordsExpiryBesideTheRetryAfterOfItsLease() throws Exception {
        String key = key();
        Held held = holdFirst("/release/leased/payments", key);
        HttpResponse<String> duplicate = send(held.request);
        java.time.Instant inProgressExpiry = server.expiresAt("shop-a", key);
        assertThat(held.release().statusCode()).isEqualTo(201);

        assertThat(duplicate.statusCode()).isEqualTo(409);
        assertThat(duplicate.headers().firstValue("Retry-After").map(Integer::parseInt)).as("the lease's end: 3 seconds at most")
                .hasValueSatisfying(seconds -> assertThat(seconds).isBetween(1, 3));
        assertThat(duplicate.headers().firstValue(HttpIdempotency.EXPIRES_HEADER).map(PaymentsServerDates::parse))
                .as("the record's expiry, a day away, not the lease's end")
                .hasValue(inProgressExpiry.truncatedTo(java.time.temporal.ChronoUnit.SECONDS));
    }

    // ---- helpers -------------------------------------------------------------------------------------

    static dev.idempotency.RetryPolicy fastRetries(int attempts) {
        return dev.idempotency.RetryPolicy.builder().maxAttempts(attempts).backoff(Duration.ofMillis(10), Duration.ofMillis(50)).build();
    }

    /** A request held inside its handler until the test releases it, and its answer to come. */
    private record Held(HttpRequest request, CompletableFuture<HttpResponse<String>> first, PaymentsServer.Hold hold) {
        HttpResponse<String> release() throws Exception {
            hold.release.countDown();
            return first.get(30, TimeUnit.SECONDS);
        }
    }

    private Held holdFirst(String path, String key) throws Exception {
        PaymentsServer.Hold hold = hold(path + key);
        HttpRequest request = request(path, "shop-a", key).POST(body("hold:" + path + key)).build();
        CompletableFuture<HttpResponse<String>> first = sendAsync(request);
        assertThat(hold.entered.await(10, TimeUnit.SECONDS)).isTrue();
        return new Held(request, first, hold);
    }

    private PaymentsServer.Hold hold(String name) {
        PaymentsServer.Hold hold = new PaymentsServer.Hold();
        server.holds.put(name, hold);
        return hold;
    }

    /** Sends the request three times; the second and third answers must be the first's, replayed. */
    private List<HttpResponse<String>> sendThriceAndCheckTheRetriesReplayTheFirst(String path, String key, String body)
            throws Exception {
        List<HttpResponse<String>> answers = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            answers.add(send(request(path, "shop-a", key).POST(body(body)).build()));
        }
        for (HttpResponse<String> retry : answers.subList(1, 3)) {
            assertThat(retry.statusCode()).isEqualTo(answers.get(0).statusCode());
            assertThat(retry.body()).isEqualTo(answers.get(0).body());
            assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        }
        return answers;
    }

    private static String key() {
        return UUID.randomUUID().toString();
    }

    private HttpRequest.Builder request(String path, String client, String key) {
        HttpRequest.Builder b = HttpRequest.newBuilder(server.uri(path)).timeout(Duration.ofSeconds(30)).header("X-Client", client);
        return key == null ? b : b.header("Idempotency-Key", key);
    }

    private static HttpRequest.BodyPublisher body(String text) {
        return HttpRequest.BodyPublishers.ofString(text, StandardCharsets.UTF_8);
    }

    private HttpResponse<String> send(HttpRequest request) throws IOException, InterruptedException {
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private CompletableFuture<HttpResponse<String>> sendAsync(HttpRequest request) {
        return http.sendAsync(request, HttpResponse.BodyHandlers.ofString());
    }
}
