package dev.idempotency.faults;

import dev.idempotency.ResultCodec;
import dev.idempotency.redis.RedisLeasingStore;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A Redis server as the store of lease mode ({@link RedisLeasingStore}): no transaction, so the
 * workload keeps no business rows; the prepare's value lives in the recovery point the store keeps
 * with the claim, and the service's answer in the completed record ({@link LeaseWorkload#phasesOutside}).
 *
 * <p>The records are read for the check as the store lays them out (its class comment): one hash
 * per record under {@code prefix:<scope length>:<scope>:<id>}, the status in field {@code s}
 * ({@code P}, {@code C}, {@code F}) and the encoded result in {@code r}.
 *
 * @param uri the server, {@code redis://host:port}
 */
record RedisLeaseStore(String uri) implements LeaseStore {

    private static final String PREFIX = "faults";
    private static final Map<String, String> STATUS = Map.of("P", "IN_PROGRESS", "C", "COMPLETED", "F", "FAILED");

    @Override
    public String name() {
        return "Redis";
    }

    @Override
    public List<String> address() {
        return List.of(uri, "-", "-");
    }

    @Override
    public Opened open(int connections) {
        RedisClient client = RedisClient.create(uri);
        StatefulRedisConnection<byte[], byte[]> connection = client.connect(ByteArrayCodec.INSTANCE);
        RedisLeasingStore store = RedisLeasingStore.builder(connection).keyPrefix(PREFIX).build();
        return new Opened() {
            @Override
            public void createTables() {
                // a Redis store needs no schema
            }

            @Override
            public FaultClient.Factory clients(String scope, Path runDir, Duration lease) {
                return LeaseStore.clientsOutside(store, scope, runDir, lease);
            }

            @Override
            public DatabaseState read(String scope, ExternalEffects service) {
                RedisCommands<byte[], byte[]> redis = connection.sync();
                String start = PREFIX + ":" + scope.length() + ":" + scope + ":";
                Map<String, DatabaseState.Record> records = new HashMap<>();
                ScanArgs match = ScanArgs.Builder.matches(start + "*").limit(1_000);
                KeyScanCursor<byte[]> cursor = redis.scan(match);
                while (true) {
                    for (byte[] redisKey : cursor.getKeys()) {
                        Map<byte[], byte[]> fields = redis.hgetall(redisKey);
                        Map<String, byte[]> byName = new HashMap<>();
                        fields.forEach((f, v) -> byName.put(text(f), v));
                        String id = text(redisKey).substring(start.length());
                        records.put(id, new DatabaseState.Record(STATUS.getOrDefault(text(byName.get("s")), "unknown status"),
                                decode(byName.get("r"))));
                    }
                    if (cursor.isFinished()) {
                        break;
                    }
                    cursor = redis.scan(ScanCursor.of(cursor.getCursor()), match);
                }
                return new DatabaseState(null, records, service.made());
            }

            @Override
            public void close() {
                connection.close();
                client.shutdown();
            }
        };
    }

    private static String decode(byte[] result) {
        try {
            return result == null ? null : ResultCodec.string().decode(result);
        } catch (Exception e) {
            throw new IllegalStateException("a recorded result is not text", e);
        }
    }

    private static String text(byte[] bytes) {
        return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return name();
    }
}
