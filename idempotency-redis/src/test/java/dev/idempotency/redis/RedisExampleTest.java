package dev.idempotency.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.DownstreamKey;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.IdempotentCall;
import dev.idempotency.LeasedIdempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.ResultCodec;
import dev.idempotency.StoreUnavailableException;
import dev.idempotency.StoreUnavailablePolicy;
import dev.idempotency.spi.NoTransaction;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The code that docs/stores-beyond-jdbc.md quotes, run on the real server: a charge paid once per key. */
class RedisExampleTest {

    /** A payment provider that charges every call it gets. */
    static final class Provider {
        final AtomicInteger charges = new AtomicInteger();

        String charge(DownstreamKey key, long cents) {
            return "charge " + charges.incrementAndGet() + " of " + cents + " under " + key.id();
        }
    }

    @Test
    void aChargeRetriedThroughRedisIsPaidOnce() {
        String uri = RedisServers.required("IDEMPOTENCY_REDIS_URI");
        Provider provider = new Provider();
        IdempotencyKey key = IdempotencyKey.of("payments", "order-" + System.nanoTime());
        long amount = 1999;
        RedisClient client = RedisClient.create(uri);
        try {
            // tag::redis[]
            StatefulRedisConnection<byte[], byte[]> connection = client.connect(ByteArrayCodec.INSTANCE);
            RedisLeasingStore store = RedisLeasingStore.builder(connection).build();
            LeasedIdempotency<NoTransaction> payments = LeasedIdempotency.of(store);

            Outcome<String> outcome = payments.lease(IdempotentCall.of(key, ResultCodec.string()),
                    attempt -> provider.charge(attempt.downstreamKey(), amount));
            // end::redis[]
            Outcome<String> retried = payments.lease(IdempotentCall.of(key, ResultCodec.string()),
                    attempt -> provider.charge(attempt.downstreamKey(), amount));
            assertThat(outcome.status()).isEqualTo(Outcome.Status.EXECUTED);
            assertThat(retried.status()).isEqualTo(Outcome.Status.REPLAYED);
            assertThat(retried.value()).isEqualTo(outcome.value());
            assertThat(provider.charges.get()).isEqualTo(1);

            List<IdempotencyKey> alerts = new CopyOnWriteArrayList<>();
            // tag::unavailable[]
            IdempotencyListener alerting = new IdempotencyListener() {
                @Override
                public void onRunWithoutDeduplication(IdempotencyKey key, StoreUnavailableException unavailable) {
                    alerts.add(key); // page someone: retries of these operations run them again
                }
            };
            LeasedIdempotency<NoTransaction> keepsServing = LeasedIdempotency.builder(store).listener(alerting)
                    .whenStoreUnavailable(StoreUnavailablePolicy.RUN_WITHOUT_DEDUPLICATION)
                    .build();
            // end::unavailable[]
            assertThat(keepsServing.lease(IdempotentCall.of(key, ResultCodec.string()), attempt -> "again").status())
                    .as("with the store up, the opt-in deduplicates as ever").isEqualTo(Outcome.Status.REPLAYED);
            assertThat(alerts).isEmpty();
        } finally {
            client.shutdown();
        }
    }

    /** A second attempt while the first holds the lease is told when the key's record expires, beside the lease's end. */
    @Test
    void aKeyInProgressTellsWhenItsRecordExpires() {
        String uri = RedisServers.required("IDEMPOTENCY_REDIS_URI");
        IdempotencyKey key = IdempotencyKey.of("payments", "held-" + System.nanoTime());
        RedisClient client = RedisClient.create(uri);
        try (StatefulRedisConnection<byte[], byte[]> connection = client.connect(ByteArrayCodec.INSTANCE)) {
            LeasedIdempotency<NoTransaction> payments = LeasedIdempotency.of(RedisLeasingStore.builder(connection).build());
            java.util.concurrent.atomic.AtomicReference<Outcome<String>> second = new java.util.concurrent.atomic.AtomicReference<>();
            payments.lease(IdempotentCall.of(key, ResultCodec.string()), attempt -> {
                second.set(payments.lease(IdempotentCall.of(key, ResultCodec.string()), other -> "never"));
                return "first";
            });
            Outcome.InProgress<String> held = (Outcome.InProgress<String>) second.get();
            assertThat(held.leaseUntil()).as("the lease's end").isNotNull();
            assertThat(held.expiresAt()).as("the record's expiry, a retention away, after the lease's end")
                    .isNotNull().isAfter(held.leaseUntil());
        } finally {
            client.shutdown();
        }
    }
}
