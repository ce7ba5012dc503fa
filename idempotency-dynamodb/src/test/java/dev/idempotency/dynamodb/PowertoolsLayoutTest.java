package dev.idempotency.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.LeasedCompletion;
import dev.idempotency.spi.NoTransaction;
import dev.idempotency.spi.RecordStatus;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * What the Powertools layout shares with a Powertools table, read from the items themselves: the
 * key {@code id}, the time to live {@code expiration} in epoch seconds, the lease end
 * {@code in_progress_expiration} in epoch milliseconds, and the statuses {@code INPROGRESS} and
 * {@code COMPLETED}; the ids carry the store's prefix, not a function's name.
 */
class PowertoolsLayoutTest {

    @Test
    void itemsCarryPowertoolsNamesUnitsAndStatuses() {
        DynamoDbClient client = DynamoDbServers.client();
        DynamoDbLeasingStore store = DynamoDbLeasingStore.builder(client, "powertools-layout").layout(TableLayout.POWERTOOLS).build();
        store.createTableIfMissing();
        IdempotencyKey key = IdempotencyKey.of("orders", "o-" + System.nanoTime());
        LeaseClaim.Acquired claim = (LeaseClaim.Acquired) store.claimLease(NoTransaction.NONE,
                new LeaseRequest(key, Fingerprint.of("A"), "owner-1", Duration.ofMinutes(5), Duration.ofHours(1), Duration.ofSeconds(1)));
        Map<String, AttributeValue> held = item(client, key);
        assertThat(held.get("status").s()).isEqualTo("INPROGRESS");
        assertThat(Long.parseLong(held.get("in_progress_expiration").n())).isEqualTo(claim.leaseUntil().toEpochMilli());
        assertThat(Long.parseLong(held.get("expiration").n())).isEqualTo(seconds(claim.now().plus(Duration.ofHours(1))));

        Instant completed = store.completeLeased(NoTransaction.NONE, "owner-1", new LeasedCompletion(key, RecordStatus.COMPLETED,
                "receipt-v1", "paid".getBytes(StandardCharsets.UTF_8), Duration.ofHours(1))).orElseThrow();
        Map<String, AttributeValue> done = item(client, key);
        assertThat(done.get("status").s()).isEqualTo("COMPLETED");
        assertThat(done).doesNotContainKey("in_progress_expiration");
        assertThat(Long.parseLong(done.get("expiration").n())).isEqualTo(seconds(completed.plus(Duration.ofHours(1))));
        assertThat(done.get("result").b().asUtf8String()).isEqualTo("paid");
    }

    private static Map<String, AttributeValue> item(DynamoDbClient client, IdempotencyKey key) {
        String id = "idempotency#" + key.scope().length() + ":" + key.scope() + ":" + key.id();
        return client.getItem(r -> r.tableName("powertools-layout").key(Map.of("id", AttributeValue.fromS(id))).consistentRead(true))
                .item();
    }

    /** Epoch seconds, rounded up, as the time to live is written. */
    private static long seconds(Instant at) {
        return Math.floorDiv(at.toEpochMilli() + 999, 1000);
    }
}
