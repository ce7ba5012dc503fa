package dev.idempotency.redis;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.NoTransaction;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The Redis store on a primary with one replica, waiting for it after every write ({@code WAIT 1}):
 * the lease tier passes; a store that asks for more replicas than there are refuses each write it
 * made, saying how many confirmed it.
 */
class RedisReplicatedContractTest extends RedisContract {

    private StatefulRedisConnection<byte[], byte[]> primary;
    private RedisClient client;

    private synchronized StatefulRedisConnection<byte[], byte[]> primary() {
        if (primary == null) {
            client = RedisClient.create(RedisServers.required("IDEMPOTENCY_REDIS_PRIMARY_URI"));
            primary = client.connect(ByteArrayCodec.INSTANCE);
        }
        return primary;
    }

    @Override
    RedisNode server() {
        return RedisNode.of(primary());
    }

    @Override
    RedisLeasingStore.Builder configure(RedisLeasingStore.Builder builder) {
        return builder.waitForReplicas(1, Duration.ofSeconds(5));
    }

    @Override
    void flush() {
        primary().sync().flushall();
    }

    @AfterAll
    void close() {
        if (client != null) {
            client.shutdown();
        }
    }

    @Test
    void aWriteThatFewerReplicasConfirmedThanAskedIsRefused() {
        RedisLeasingStore greedy = RedisLeasingStore.builder(primary()).keyPrefix("greedy").waitForReplicas(2, Duration.ofMillis(200)).build();
        IdempotencyKey key = IdempotencyKey.of("replicated", "greedy");
        assertThatThrownBy(() -> greedy.claimLease(NoTransaction.NONE, new LeaseRequest(key, Fingerprint.of("A"), "owner", Duration.ofMinutes(1),
                Duration.ofHours(1), Duration.ofSeconds(1))))
                .isInstanceOf(IdempotencyStoreException.class)
                .hasMessageContaining("the claim was written on the Redis primary, but only 1 of 2 replicas confirmed it");
    }
}
