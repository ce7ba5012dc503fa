package dev.idempotency.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.LeasedIdempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.ResultCodec;
import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.NoTransaction;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The window a failover loses, measured on the primary and replica of scripts/redis.sh: completed
 * operations are recorded on the primary as fast as one client can, the primary is killed
 * (SIGKILL) in the middle, the replica is promoted ({@code REPLICAOF NO ONE}), and every operation
 * the client saw completed is looked up on it. Without {@code WAIT} some may be missing (a retry
 * would run them again); with {@code WAIT 1} none may. On demand only, since it kills and rebuilds
 * the replica pair: {@code -Didempotency.redis.failover=true} (rounds: {@code
 * -Didempotency.redis.failover.rounds}, by default 5). Prints its figures.
 */
class RedisFailoverTest {

    private static final String PROPERTY = "idempotency.redis.failover";

    @Test
    void theLostWindowWithAndWithoutWait() throws Exception {
        assumeTrue(Boolean.getBoolean(PROPERTY), "the failover measurement runs on demand: -D" + PROPERTY + "=true");
        int rounds = Integer.getInteger(PROPERTY + ".rounds", 5);
        long lostWithout = 0;
        long lostWith = 0;
        long completedWithout = 0;
        long completedWith = 0;
        for (int round = 0; round < rounds; round++) {
            long[] without = round(false);
            long[] with = round(true);
            completedWithout += without[0];
            lostWithout += without[1];
            completedWith += with[0];
            lostWith += with[1];
        }
        System.out.printf("Redis failover, %d rounds: without WAIT %d of %d completed operations lost; with WAIT 1, %d of %d%n",
                rounds, lostWithout, completedWithout, lostWith, completedWith);
        assertThat(lostWith).as("operations lost although a replica confirmed them").isZero();
    }

    /** One round: writes until the primary is killed, promotes the replica; answers {completed, lost}. */
    private long[] round(boolean wait) throws Exception {
        RedisServerScript.run("start", "replica");
        RedisURI primaryUri = RedisURI.create(RedisServers.required("IDEMPOTENCY_REDIS_PRIMARY_URI"));
        RedisURI replicaUri = RedisURI.create(RedisServers.required("IDEMPOTENCY_REDIS_REPLICA_URI"));
        RedisClient client = RedisClient.create();
        client.setOptions(ClientOptions.builder().autoReconnect(false)
                .timeoutOptions(TimeoutOptions.enabled(Duration.ofSeconds(2))).build());
        List<IdempotencyKey> completed = new ArrayList<>();
        try (StatefulRedisConnection<byte[], byte[]> primary = client.connect(ByteArrayCodec.INSTANCE, primaryUri);
             StatefulRedisConnection<byte[], byte[]> replica = client.connect(ByteArrayCodec.INSTANCE, replicaUri)) {
            primary.sync().flushall();
            RedisLeasingStore.Builder builder = RedisLeasingStore.builder(primary).keyPrefix("failover");
            RedisLeasingStore store = (wait ? builder.waitForReplicas(1, Duration.ofSeconds(1)) : builder).build();
            LeasedIdempotency<NoTransaction> engine = LeasedIdempotency.of(store);
            AtomicBoolean killed = new AtomicBoolean();
            Thread killer = new Thread(() -> {
                try {
                    Thread.sleep(300);
                    long pid = Long.parseLong(Files.readString(Path.of(RedisServers.required("IDEMPOTENCY_REDIS_DIR"), "primary",
                            "redis.pid")).strip());
                    killed.set(true); // before the kill: the writer may see the primary gone at once
                    ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            killer.start();
            for (int i = 0; ; i++) {
                IdempotencyKey key = IdempotencyKey.of("failover", (wait ? "wait-" : "async-") + i);
                try {
                    Outcome<String> outcome = engine.lease(IdempotentCall.of(key, ResultCodec.string()), attempt -> "charged");
                    if (outcome.status() == Outcome.Status.EXECUTED) {
                        completed.add(key);
                    }
                } catch (RuntimeException primaryGone) {
                    if (killed.get()) {
                        break;
                    }
                    throw primaryGone;
                }
            }
            killer.join();
            replica.sync().replicaofNoOne();
            RedisLeasingStore promoted = RedisLeasingStore.builder(replica).keyPrefix("failover").build();
            long lost = 0;
            for (IdempotencyKey key : completed) {
                LeaseClaim found = promoted.claimLease(NoTransaction.NONE, new LeaseRequest(key, dev.idempotency.Fingerprint.NONE,
                        "probe", Duration.ofMinutes(1), Duration.ofHours(1), Duration.ofSeconds(1)));
                if (!(found instanceof LeaseClaim.Existing)) {
                    lost++;
                }
            }
            return new long[] {completed.size(), lost};
        } finally {
            client.shutdown();
            RedisServerScript.run("stop", "replica");
            RedisServerScript.run("start", "replica");
        }
    }
}
