package dev.idempotency.redis;

import dev.idempotency.testsupport.TestEnvironment;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import java.util.Arrays;
import java.util.List;

/**
 * The Redis servers of the tests, from the environment that scripts/redis.sh exports (a test whose
 * server is not given is skipped, or fails under CI): one
 * connection to each, opened on first use and shared by the test classes of the run.
 */
final class RedisServers {

    private static StatefulRedisConnection<byte[], byte[]> single;
    private static StatefulRedisClusterConnection<byte[], byte[]> cluster;

    private RedisServers() {
    }

    /** The variable's value; a test without it is skipped, or fails under CI. */
    static String required(String variable) {
        return TestEnvironment.require(variable, "start the test servers with"
                + " `env_lines=\"$(scripts/redis.sh start all)\" && eval \"$env_lines\"` (scripts/test does it)").strip();
    }

    static synchronized StatefulRedisConnection<byte[], byte[]> single() {
        if (single == null) {
            single = RedisClient.create(required("IDEMPOTENCY_REDIS_URI")).connect(ByteArrayCodec.INSTANCE);
        }
        return single;
    }

    static synchronized StatefulRedisClusterConnection<byte[], byte[]> cluster() {
        if (cluster == null) {
            List<RedisURI> uris = Arrays.stream(required("IDEMPOTENCY_REDIS_CLUSTER_URIS").split(",")).map(RedisURI::create).toList();
            cluster = RedisClusterClient.create(uris).connect(ByteArrayCodec.INSTANCE);
        }
        return cluster;
    }
}
