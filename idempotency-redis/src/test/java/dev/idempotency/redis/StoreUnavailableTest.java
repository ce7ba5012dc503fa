package dev.idempotency.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.http.HttpAnswer;
import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.http.Request;
import dev.idempotency.http.Response;
import dev.idempotency.spi.LeaseOnlyStore;
import dev.idempotency.spi.NoTransaction;
import dev.idempotency.testkit.StoreOutageContract;
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
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The store-unavailable policy ({@link StoreOutageContract}) on a real Redis server that is stopped
 * in the middle of a run: the spare server of scripts/redis.sh, stopped and started again by the
 * script. Over HTTP, the refused call is a 503 with Retry-After.
 */
class StoreUnavailableTest extends StoreOutageContract {

    private ClientResources resources;
    private RedisClient client;
    private StatefulRedisConnection<byte[], byte[]> connection;

    @Override
    protected void startServer() throws Exception {
        RedisServerScript.run("start", "spare");
        if (connection != null) {
            awaitReconnected();
        }
    }

    @Override
    protected void stopServer() throws Exception {
        RedisServerScript.run("stop", "spare");
    }

    @Override
    protected LeaseOnlyStore openStore() {
        int port = Integer.parseInt(RedisServers.required("IDEMPOTENCY_REDIS_PORT")) + 6;
        resources = ClientResources.builder().reconnectDelay(Delay.constant(Duration.ofMillis(50))).build();
        client = RedisClient.create(resources, RedisURI.create("127.0.0.1", port));
        client.setOptions(ClientOptions.builder().disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled(Duration.ofSeconds(2))).build());
        connection = client.connect(ByteArrayCodec.INSTANCE);
        return RedisLeasingStore.builder(connection).build();
    }

    @Override
    protected void emptyStore() {
        connection.sync().flushall();
    }

    @Override
    protected Duration retryAfter() {
        return RedisLeasingStore.RETRY_AFTER;
    }

    @Override
    protected void closeStore() {
        if (client != null) {
            client.shutdown();
            resources.shutdown();
        }
    }

    @Test
    void theHttpLayerAnswers503WithRetryAfterAndDoesNotRunTheHandler() throws Exception {
        HttpIdempotency<NoTransaction> http = HttpIdempotency.builder(refusing()).build();
        Request request = Request.of("POST", "/orders", Map.of("Idempotency-Key", List.of("order-7")),
                "{}".getBytes(StandardCharsets.UTF_8));
        stopServer();
        HttpAnswer answer = http.handleLeased(request, "client-1", (r, attempt) -> {
            charges().incrementAndGet();
            return Response.of(201);
        });
        assertThat(answer.kind()).isEqualTo(HttpAnswer.Kind.STORE_UNAVAILABLE);
        assertThat(answer.response().status()).isEqualTo(503);
        assertThat(answer.response().header("Retry-After")).contains("1");
        assertThat(charges().get()).as("the handler ran").isZero();
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
}
