package dev.idempotency.redis;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisScriptingCommands;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import java.util.List;
import java.util.function.Supplier;

/**
 * Where the scripts run: one Redis server, or the cluster node that owns a key's slot. The one
 * place that speaks Lettuce's command API. Thread-safe, as Lettuce's connections are.
 */
class RedisNode {

    /** {@code WAIT}: on the server of a key, for a number of replicas, up to a timeout in ms; answers how many confirmed. */
    interface Waiter {
        long await(byte[] key, int replicas, long timeoutMillis);
    }

    private final Supplier<RedisScriptingCommands<byte[], byte[]>> scripting;
    private final Waiter waiter;
    private final String name;

    RedisNode(Supplier<RedisScriptingCommands<byte[], byte[]>> scripting, Waiter waiter, String name) {
        this.scripting = scripting;
        this.waiter = waiter;
        this.name = name;
    }

    static RedisNode of(StatefulRedisConnection<byte[], byte[]> connection) {
        return new RedisNode(connection::sync, (key, replicas, timeout) -> connection.sync().waitForReplication(replicas, timeout),
                "one server");
    }

    static RedisNode of(StatefulRedisClusterConnection<byte[], byte[]> connection) {
        return new RedisNode(connection::sync, (key, replicas, timeout) -> {
            RedisClusterNode owner = connection.getPartitions().getPartitionBySlot(SlotHash.getSlot(key));
            return connection.getConnection(owner.getNodeId()).sync().waitForReplication(replicas, timeout);
        }, "a cluster");
    }

    /** Runs {@code script} (by its digest, loading it on a server that has not seen it) on {@code key}. */
    List<Object> eval(String script, String digest, byte[] key, byte[]... args) {
        RedisScriptingCommands<byte[], byte[]> commands = scripting.get();
        byte[][] keys = {key};
        try {
            return commands.evalsha(digest, ScriptOutputType.MULTI, keys, args);
        } catch (RedisNoScriptException notLoaded) {
            return commands.eval(script, ScriptOutputType.MULTI, keys, args);
        }
    }

    /** Waits for {@code replicas} replicas of the server of {@code key} to have every write so far; answers how many did. */
    long awaitReplicas(byte[] key, int replicas, long timeoutMillis) {
        return waiter.await(key, replicas, timeoutMillis);
    }

    /** The digest of {@code script}, as the server names it. */
    String digest(String script) {
        return scripting.get().digest(script);
    }

    @Override
    public String toString() {
        return name;
    }
}
