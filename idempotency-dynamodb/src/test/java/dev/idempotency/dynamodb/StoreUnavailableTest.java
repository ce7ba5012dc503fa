package dev.idempotency.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.http.HttpAnswer;
import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.http.Request;
import dev.idempotency.http.Response;
import dev.idempotency.spi.LeaseOnlyStore;
import dev.idempotency.spi.NoTransaction;
import dev.idempotency.testkit.StoreOutageContract;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The store-unavailable policy ({@link StoreOutageContract}) on a real dynalite server that is
 * stopped in the middle of a run: the spare server of scripts/dynalite.sh, stopped and started
 * again by the script. A restarted dynalite has lost its tables: starting it creates the table
 * again. Over HTTP, the refused call is a 503 with Retry-After.
 */
class StoreUnavailableTest extends StoreOutageContract {

    private DynamoDbClient client;
    private DynamoDbLeasingStore store;

    @Override
    protected void startServer() throws Exception {
        DynaliteScript.run("start", "spare");
        if (store != null) {
            store.createTableIfMissing();
        }
    }

    @Override
    protected void stopServer() throws Exception {
        DynaliteScript.run("stop", "spare");
    }

    @Override
    protected LeaseOnlyStore openStore() {
        int port = Integer.parseInt(DynamoDbServers.required("IDEMPOTENCY_DYNALITE_PORT")) + 1;
        client = DynamoDbServers.client("http://127.0.0.1:" + port);
        store = DynamoDbLeasingStore.builder(client, "unavailable").clockCalibration(Duration.ZERO).build();
        store.createTableIfMissing();
        return store;
    }

    @Override
    protected void emptyStore() {
        DynamoDbServers.empty(client, "unavailable", TableLayout.LIBRARY.partitionKey());
    }

    @Override
    protected Duration retryAfter() {
        return DynamoDbLeasingStore.RETRY_AFTER;
    }

    @Override
    protected void closeStore() {
        if (client != null) {
            client.close();
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
}
