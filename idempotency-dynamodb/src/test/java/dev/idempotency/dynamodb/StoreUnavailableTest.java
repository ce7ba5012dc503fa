package dev.idempotency.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.IdempotentCall;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.ResultCodec;
import dev.idempotency.StoreUnavailableException;
import dev.idempotency.StoreUnavailablePolicy;
import dev.idempotency.http.HttpAnswer;
import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.http.Request;
import dev.idempotency.http.Response;
import dev.idempotency.spi.NoTransaction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The store-unavailable policy on a real dynalite server that is stopped in the middle of a run (the
 * spare server of scripts/dynalite.sh, stopped and started again by the script): by default the call
 * is refused with a typed exception and the HTTP layer answers 503 with Retry-After; the named
 * opt-in runs the call without deduplication and tells the listener each time. A restarted dynalite
 * has lost its tables: the test creates its table again.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StoreUnavailableTest {

    private final Heard heard = new Heard();
    private DynamoDbClient client;
    private DynamoDbLeasingStore store;
    private ManagedIdempotency<NoTransaction> refusing;
    private ManagedIdempotency<NoTransaction> runningAnyway;
    private final AtomicInteger charges = new AtomicInteger();

    @BeforeAll
    void start() throws Exception {
        DynaliteScript.run("start", "spare");
        int port = Integer.parseInt(DynamoDbServers.required("IDEMPOTENCY_DYNALITE_PORT")) + 1;
        client = DynamoDbServers.client("http://127.0.0.1:" + port);
        store = DynamoDbLeasingStore.builder(client, "unavailable").clockCalibration(Duration.ZERO).build();
        Idempotency<NoTransaction> engine = Idempotency.builder(store).listener(heard).build();
        refusing = ManagedIdempotency.of(engine, NoTransaction.runner());
        runningAnyway = ManagedIdempotency.builder(engine, NoTransaction.runner())
                .whenStoreUnavailable(StoreUnavailablePolicy.RUN_WITHOUT_DEDUPLICATION).build();
    }

    @AfterAll
    void stop() throws Exception {
        if (client != null) {
            client.close();
        }
        DynaliteScript.run("stop", "spare");
    }

    @BeforeEach
    void serverUp() throws Exception {
        DynaliteScript.run("start", "spare");
        store.createTableIfMissing();
        DynamoDbServers.empty(client, "unavailable", TableLayout.LIBRARY.partitionKey());
        heard.clear();
        charges.set(0);
    }

    @Test
    void whileTheServerIsDownTheDefaultRefusesAndTheOptInRunsWithoutDeduplicationAndIsHeard() throws Exception {
        IdempotencyKey paid = IdempotencyKey.of("orders", "paid-before");
        assertThat(charge(refusing, paid).status()).isEqualTo(Outcome.Status.EXECUTED);
        assertThat(charge(refusing, paid).status()).isEqualTo(Outcome.Status.REPLAYED);

        DynaliteScript.run("stop", "spare");
        IdempotencyKey refused = IdempotencyKey.of("orders", "refused");
        assertThatThrownBy(() -> charge(refusing, refused)).isInstanceOf(StoreUnavailableException.class)
                .hasMessageContaining("could not be reached for the claim")
                .satisfies(e -> assertThat(((StoreUnavailableException) e).retryAfter()).isEqualTo(DynamoDbLeasingStore.RETRY_AFTER));
        assertThat(charges.get()).as("charges: one before the stop, none refused").isEqualTo(1);
        assertThat(heard.errors).singleElement().isInstanceOf(StoreUnavailableException.class);

        Outcome<String> unprotected = charge(runningAnyway, paid);
        assertThat(unprotected.status()).isEqualTo(Outcome.Status.EXECUTED);
        assertThat(charges.get()).as("the opt-in ran an operation that had already run: the price of running without the store")
                .isEqualTo(2);
        assertThat(heard.unprotected).containsExactly(paid);

        DynaliteScript.run("start", "spare");
        store.createTableIfMissing();
        IdempotencyKey after = IdempotencyKey.of("orders", "after-restart");
        assertThat(charge(refusing, after).status()).isEqualTo(Outcome.Status.EXECUTED);
        assertThat(charge(runningAnyway, after).status()).as("back to deduplication once the store answers").isEqualTo(Outcome.Status.REPLAYED);
        assertThat(heard.unprotected).as("runs without deduplication heard").containsExactly(paid);
    }

    @Test
    void aServerStoppedWhileTheCallRunsFailsItsCompletionWhateverThePolicy() throws Exception {
        IdempotencyKey key = IdempotencyKey.of("orders", "stopped-mid-call");
        assertThatThrownBy(() -> runningAnyway.lease(IdempotentCall.of(key, ResultCodec.string()), attempt -> {
            charges.incrementAndGet();
            DynaliteScript.run("stop", "spare");
            return "charged";
        })).isInstanceOf(StoreUnavailableException.class).hasMessageContaining("could not be reached for the completion");
        assertThat(charges.get()).isEqualTo(1);
        assertThat(heard.unprotected).as("the claim reached the store: nothing ran without deduplication").isEmpty();
        assertThat(heard.errors).singleElement().isInstanceOf(StoreUnavailableException.class);
    }

    @Test
    void theHttpLayerAnswers503WithRetryAfterAndDoesNotRunTheHandler() throws Exception {
        HttpIdempotency<NoTransaction> http = HttpIdempotency.builder(refusing).build();
        Request request = Request.of("POST", "/orders", Map.of("Idempotency-Key", List.of("order-7")),
                "{}".getBytes(StandardCharsets.UTF_8));
        DynaliteScript.run("stop", "spare");
        HttpAnswer answer = http.handleLeased(request, "client-1", (r, attempt) -> {
            charges.incrementAndGet();
            return Response.of(201);
        });
        assertThat(answer.kind()).isEqualTo(HttpAnswer.Kind.STORE_UNAVAILABLE);
        assertThat(answer.response().status()).isEqualTo(503);
        assertThat(answer.response().header("Retry-After")).contains("1");
        assertThat(charges.get()).as("the handler ran").isZero();
    }

    private Outcome<String> charge(ManagedIdempotency<NoTransaction> engine, IdempotencyKey key) {
        return engine.lease(IdempotentCall.of(key, ResultCodec.string()), attempt -> "charge " + charges.incrementAndGet());
    }

    /** What the engine's listener heard. */
    private static final class Heard implements IdempotencyListener {
        final List<IdempotencyKey> unprotected = new CopyOnWriteArrayList<>();
        final List<Throwable> errors = new CopyOnWriteArrayList<>();

        @Override
        public void onRunWithoutDeduplication(IdempotencyKey key, StoreUnavailableException unavailable) {
            unprotected.add(key);
        }

        @Override
        public void onError(IdempotencyKey key, Throwable failure, Duration elapsed) {
            errors.add(failure);
        }

        void clear() {
            unprotected.clear();
            errors.clear();
        }
    }
}
