package dev.idempotency.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.IdempotentCall;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.Phases;
import dev.idempotency.ResultCodec;
import dev.idempotency.StoreUnavailableException;
import dev.idempotency.StoreUnavailablePolicy;
import dev.idempotency.http.HttpAnswer;
import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.http.Request;
import dev.idempotency.http.Response;
import dev.idempotency.spi.NoTransaction;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The store-unavailable policy on a real Redis server that is stopped in the middle of a run (the
 * spare server of scripts/redis.sh, stopped and started again by the script): by default the call
 * is refused with a typed exception and the HTTP layer answers 503 with Retry-After; the named
 * opt-in runs the call without deduplication and tells the listener each time.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StoreUnavailableTest {

    private final Heard heard = new Heard();
    private ClientResources resources;
    private RedisClient client;
    private StatefulRedisConnection<byte[], byte[]> connection;
    private ManagedIdempotency<NoTransaction> refusing;
    private ManagedIdempotency<NoTransaction> runningAnyway;
    private final AtomicInteger charges = new AtomicInteger();

    @BeforeAll
    void start() throws Exception {
        script("start", "spare");
        int port = Integer.parseInt(RedisServers.required("IDEMPOTENCY_REDIS_PORT")) + 6;
        resources = ClientResources.builder().reconnectDelay(Delay.constant(Duration.ofMillis(50))).build();
        client = RedisClient.create(resources, RedisURI.create("127.0.0.1", port));
        client.setOptions(ClientOptions.builder().disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled(Duration.ofSeconds(2))).build());
        connection = client.connect(ByteArrayCodec.INSTANCE);
        RedisLeasingStore store = RedisLeasingStore.builder(connection).build();
        Idempotency<NoTransaction> engine = Idempotency.builder(store).listener(heard).build();
        refusing = ManagedIdempotency.of(engine, NoTransaction.runner());
        runningAnyway = ManagedIdempotency.builder(engine, NoTransaction.runner())
                .whenStoreUnavailable(StoreUnavailablePolicy.RUN_WITHOUT_DEDUPLICATION).build();
    }

    @AfterAll
    void stop() throws Exception {
        if (client != null) {
            client.shutdown();
            resources.shutdown();
        }
        script("stop", "spare");
    }

    @BeforeEach
    void serverUp() throws Exception {
        script("start", "spare");
        awaitReconnected();
        connection.sync().flushall();
        heard.clear();
        charges.set(0);
    }

    @Test
    void whileTheServerIsDownTheDefaultRefusesAndTheOptInRunsWithoutDeduplicationAndIsHeard() throws Exception {
        IdempotencyKey paid = IdempotencyKey.of("orders", "paid-before");
        assertThat(charge(refusing, paid).status()).isEqualTo(Outcome.Status.EXECUTED);
        assertThat(charge(refusing, paid).status()).isEqualTo(Outcome.Status.REPLAYED);

        script("stop", "spare");
        IdempotencyKey refused = IdempotencyKey.of("orders", "refused");
        assertThatThrownBy(() -> charge(refusing, refused)).isInstanceOf(StoreUnavailableException.class)
                .hasMessageContaining("could not be reached for the claim")
                .satisfies(e -> assertThat(((StoreUnavailableException) e).retryAfter()).isEqualTo(RedisLeasingStore.RETRY_AFTER));
        assertThat(charges.get()).as("charges: one before the stop, none refused").isEqualTo(1);
        assertThat(heard.errors).singleElement().isInstanceOf(StoreUnavailableException.class);

        Outcome<String> unprotected = charge(runningAnyway, paid);
        assertThat(unprotected.status()).isEqualTo(Outcome.Status.EXECUTED);
        assertThat(charges.get()).as("the opt-in ran an operation that had already run: the price of running without the store")
                .isEqualTo(2);
        assertThat(heard.unprotected).containsExactly(paid);

        script("start", "spare");
        awaitReconnected();
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
            script("stop", "spare");
            return "charged";
        })).isInstanceOf(StoreUnavailableException.class).hasMessageContaining("could not be reached for the completion");
        assertThat(charges.get()).isEqualTo(1);
        assertThat(heard.unprotected).as("the claim reached the store: nothing ran without deduplication").isEmpty();
        assertThat(heard.errors).singleElement().isInstanceOf(StoreUnavailableException.class);
    }

    @Test
    void theOptInRunsEachPhaseOnceWithNothingRecorded() throws Exception {
        IdempotencyKey key = IdempotencyKey.of("orders", "phases");
        List<String> ran = new CopyOnWriteArrayList<>();
        Phases<NoTransaction, String, RuntimeException> phases = Phases.<NoTransaction, String, RuntimeException>prepare(tx -> {
            ran.add("prepare");
            return "order 9";
        }, ResultCodec.string()).<String>call((attempt, prepared) -> {
            ran.add("call (attempt " + attempt.number() + ", lease until " + attempt.leaseUntil() + ")");
            return "paid " + prepared;
        }).finish((tx, prepared, called) -> {
            ran.add("finish");
            return called;
        }, ResultCodec.string());
        script("stop", "spare");
        Outcome<String> outcome = runningAnyway.run(key, phases);
        assertThat(outcome.status()).isEqualTo(Outcome.Status.EXECUTED);
        assertThat(outcome.value()).isEqualTo("paid order 9");
        assertThat(ran).containsExactly("prepare", "call (attempt 1, lease until " + Instant.MAX + ")", "finish");
        assertThat(heard.unprotected).containsExactly(key);
        assertThatThrownBy(() -> refusing.run(key, phases))
                .isInstanceOf(StoreUnavailableException.class);
        assertThat(ran).as("phases run by the refusing engine").hasSize(3);
    }

    @Test
    void theHttpLayerAnswers503WithRetryAfterAndDoesNotRunTheHandler() throws Exception {
        HttpIdempotency<NoTransaction> http = HttpIdempotency.builder(refusing).build();
        Request request = Request.of("POST", "/orders", Map.of("Idempotency-Key", List.of("order-7")),
                "{}".getBytes(StandardCharsets.UTF_8));
        script("stop", "spare");
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

    /** Waits until the client has reconnected to the server the script started again (Lettuce reconnects every 50 ms). */
    private void awaitReconnected() throws InterruptedException {
        for (int i = 0; i < 600; i++) {
            try {
                connection.sync().ping();
                return;
            } catch (RuntimeException notYet) {
                Thread.sleep(50);
            }
        }
        throw new AssertionError("the client did not reconnect to the spare Redis server within 30 seconds");
    }

    private static void script(String... args) throws Exception {
        RedisServerScript.run(args);
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
