package dev.idempotency.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.DownstreamKey;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.LeasedIdempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.Phases;
import dev.idempotency.ResultCodec;
import dev.idempotency.http.HttpAnswer;
import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.http.Request;
import dev.idempotency.http.Response;
import dev.idempotency.spi.NoTransaction;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The code that docs/stores-beyond-jdbc.md quotes, run on dynalite: a charge paid once per key, the
 * phases of an order in lease mode, and the HTTP layer's leased handler, in a Powertools table.
 */
class DynamoDbExampleTest {

    /** A payment provider that charges every call it gets. */
    static final class Provider {
        final AtomicInteger charges = new AtomicInteger();

        String charge(DownstreamKey key, long cents) {
            return "charge " + charges.incrementAndGet() + " of " + cents + " under " + key.id();
        }
    }

    @Test
    void aChargeRetriedThroughDynamoDbIsPaidOnceAndPhasesRunOnce() {
        String endpoint = DynamoDbServers.required("IDEMPOTENCY_DYNALITE_ENDPOINT");
        Provider provider = new Provider();
        IdempotencyKey key = IdempotencyKey.of("payments", "order-" + System.nanoTime());
        long amount = 1999;
        // tag::dynamodb[]
        DynamoDbClient client = DynamoDbClient.builder()
                .endpointOverride(URI.create(endpoint)) // leave out for DynamoDB itself
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
                .httpClient(UrlConnectionHttpClient.create())
                .build();
        DynamoDbLeasingStore store = DynamoDbLeasingStore.builder(client, "idempotency")
                .layout(TableLayout.POWERTOOLS) // or the library's own, the default
                .build();
        store.createTableIfMissing(); // tests and development only
        LeasedIdempotency<NoTransaction> payments = LeasedIdempotency.of(store);

        Outcome<String> outcome = payments.lease(IdempotentCall.of(key, ResultCodec.string()),
                attempt -> provider.charge(attempt.downstreamKey(), amount));
        // end::dynamodb[]
        try {
            Outcome<String> retried = payments.lease(IdempotentCall.of(key, ResultCodec.string()),
                    attempt -> provider.charge(attempt.downstreamKey(), amount));
            assertThat(outcome.status()).isEqualTo(Outcome.Status.EXECUTED);
            assertThat(retried.status()).isEqualTo(Outcome.Status.REPLAYED);
            assertThat(retried.value()).isEqualTo(outcome.value());
            assertThat(provider.charges.get()).isEqualTo(1);

            List<String> ran = new CopyOnWriteArrayList<>();
            IdempotencyKey order = IdempotencyKey.of("orders", "order-" + System.nanoTime());
            // tag::phases[]
            Phases<NoTransaction, String, RuntimeException> checkout = Phases.<NoTransaction, String, RuntimeException>prepare(tx -> {
                ran.add("prepare");
                return "order 9, 1999 cents"; // recorded as the recovery point before the call
            }, ResultCodec.string()).<String>call((attempt, prepared) -> {
                ran.add("call");
                return provider.charge(attempt.downstreamKey(), amount);
            }).finish((tx, prepared, charged) -> {
                ran.add("finish");
                return prepared + ": " + charged;
            }, ResultCodec.string());

            Outcome<String> checkedOut = payments.run(order, checkout);
            // end::phases[]
            Outcome<String> again = payments.run(order, checkout);
            assertThat(checkedOut.status()).isEqualTo(Outcome.Status.EXECUTED);
            assertThat(again.status()).isEqualTo(Outcome.Status.REPLAYED);
            assertThat(again.value()).isEqualTo(checkedOut.value()).startsWith("order 9, 1999 cents: charge 2 of 1999");
            assertThat(ran).containsExactly("prepare", "call", "finish");

            // A second attempt while the first holds the lease is told when the record expires, beside the lease's end.
            IdempotencyKey held = IdempotencyKey.of("payments", "held-" + System.nanoTime());
            java.util.concurrent.atomic.AtomicReference<Outcome<String>> second = new java.util.concurrent.atomic.AtomicReference<>();
            payments.lease(IdempotentCall.of(held, ResultCodec.string()), attempt -> {
                second.set(payments.lease(IdempotentCall.of(held, ResultCodec.string()), other -> "never"));
                return "first";
            });
            Outcome.InProgress<String> inProgress = (Outcome.InProgress<String>) second.get();
            assertThat(inProgress.leaseUntil()).as("the lease's end").isNotNull();
            assertThat(inProgress.expiresAt()).as("the record's expiry, a retention away, after the lease's end")
                    .isNotNull().isAfter(inProgress.leaseUntil());

            HttpIdempotency<NoTransaction> http = HttpIdempotency.builder(payments).build();
            Request request = Request.of("POST", "/charges", Map.of("Idempotency-Key", List.of("charge-" + System.nanoTime())),
                    "{\"cents\":1999}".getBytes(StandardCharsets.UTF_8));
            AtomicInteger handled = new AtomicInteger();
            HttpAnswer first = http.handleLeased(request, "client-1", (r, attempt) -> {
                handled.incrementAndGet();
                return Response.of(201);
            });
            HttpAnswer replayed = http.handleLeased(request, "client-1", (r, attempt) -> {
                handled.incrementAndGet();
                return Response.of(201);
            });
            assertThat(first.response().status()).isEqualTo(201);
            assertThat(replayed.response().status()).isEqualTo(201);
            assertThat(replayed.kind()).isNotEqualTo(first.kind());
            assertThat(handled.get()).as("the leased handler ran once").isEqualTo(1);
        } finally {
            client.close();
        }
    }
}
