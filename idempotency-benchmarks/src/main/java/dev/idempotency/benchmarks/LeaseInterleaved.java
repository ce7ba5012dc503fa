package dev.idempotency.benchmarks;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.LeasedIdempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.ResultCodec;
import dev.idempotency.dynamodb.DynamoDbLeasingStore;
import dev.idempotency.redis.RedisLeasingStore;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.LeaseOnlyStore;
import dev.idempotency.spi.NoTransaction;
import io.lettuce.core.RedisClient;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Lease mode's first execution and replay on each store, in the same interleaved rounds as
 * {@link Interleaved}: Redis ({@link RedisLeasingStore}, {@code IDEMPOTENCY_REDIS_URI}) and DynamoDB
 * ({@link DynamoDbLeasingStore}, {@code IDEMPOTENCY_DYNALITE_ENDPOINT}) beside the JDBC store's
 * lease mode on the databases of {@link Database}. Each store also runs a bare baseline, what the
 * same operation costs without the library: on Redis a {@code SET NX PX} and a {@code GET} (claim a
 * key, read it back: two round trips), on DynamoDB a conditional {@code PutItem} and a consistent
 * {@code GetItem} (the same two round trips), on a database one business transaction
 * ({@link Fixture#baseline()}). The leased call itself does nothing, so the figures are the
 * library's and its store's cost of deduplicating a call outside any transaction.
 *
 * <p>A store is a {@link Target}; another store kind is one more class of it and one line in
 * {@link #target}.
 *
 * <p>Run: {@code java -cp idempotency-benchmarks/target/benchmarks.jar dev.idempotency.benchmarks.LeaseInterleaved
 * --stores dynamodb,redis,h2mem,postgresql --rounds 30 --burst 20}. Prints one line per store and
 * operation: store, operation, median µs, the median of the per-round ratios to the store's own
 * baseline, and to the Redis baseline, the rounds.
 */
public final class LeaseInterleaved {

    private static final List<String> OPERATIONS = List.of("baseline", "leaseFirst", "leaseReplay");
    private static final int RECORDED = 200;

    private LeaseInterleaved() {
    }

    /** A store measured: its bare baseline, lease mode's first execution and its replay. Not thread-safe. */
    interface Target extends AutoCloseable {
        String id();

        void baseline(int i) throws Exception;

        void leaseFirst(int i) throws Exception;

        /** Replays one of the {@value #RECORDED} keys leased before the run. */
        void leaseReplay(int i) throws Exception;

        default Interleaved.Step step(String operation) {
            return switch (operation) {
                case "baseline" -> this::baseline;
                case "leaseFirst" -> this::leaseFirst;
                case "leaseReplay" -> this::leaseReplay;
                default -> throw new IllegalArgumentException("unknown operation " + operation);
            };
        }
    }

    static Target target(String id) throws Exception {
        return switch (id) {
            case "redis" -> new RedisTarget(System.getenv("IDEMPOTENCY_REDIS_URI"));
            case "dynamodb" -> new DynamoDbTarget(System.getenv("IDEMPOTENCY_DYNALITE_ENDPOINT"));
            default -> new JdbcTarget(Database.byId(id));
        };
    }

    private static IdempotentCall<String> call(String scope, String id) {
        return IdempotentCall.of(IdempotencyKey.of(scope, id), ResultCodec.string());
    }

    private static void executed(Outcome<String> outcome) {
        if (!outcome.isExecuted()) {
            throw new IllegalStateException("expected a first execution, got " + outcome.status());
        }
    }

    private static void replayed(Outcome<String> outcome) {
        if (outcome.isExecuted() || !outcome.hasValue()) {
            throw new IllegalStateException("expected a replay, got " + outcome.status());
        }
    }

    /**
     * Lease mode on a store without transactions: the {@value #RECORDED} keys leased first, then a
     * fresh key per first execution and a recorded one per replay.
     */
    abstract static class OutsideTarget implements Target {
        final String scope = "bench-" + UUID.randomUUID().toString().substring(0, 8);
        private LeasedIdempotency<NoTransaction> managed;

        /** Opens lease mode on {@code store} and leases the recorded keys. */
        final void lease(LeaseOnlyStore store) {
            managed = LeasedIdempotency.of(store);
            for (int i = 0; i < RECORDED; i++) {
                executed(managed.lease(call(scope, "recorded-" + i), attempt -> "done"));
            }
        }

        @Override
        public void leaseFirst(int i) {
            executed(managed.lease(call(scope, "fresh-" + i), attempt -> "done"));
        }

        @Override
        public void leaseReplay(int i) {
            replayed(managed.lease(call(scope, "recorded-" + (i % RECORDED)), attempt -> "again"));
        }
    }

    /** Lease mode on the Redis store, one connection. */
    static final class RedisTarget extends OutsideTarget {
        private final RedisClient client;
        private final StatefulRedisConnection<byte[], byte[]> connection;
        private final RedisCommands<byte[], byte[]> bare;

        RedisTarget(String uri) {
            if (uri == null || uri.isBlank()) {
                throw new IllegalStateException("set IDEMPOTENCY_REDIS_URI (scripts/redis.sh start single prints it)");
            }
            client = RedisClient.create(uri.strip());
            connection = client.connect(ByteArrayCodec.INSTANCE);
            bare = connection.sync();
            lease(RedisLeasingStore.builder(connection).keyPrefix("bench").build());
        }

        @Override
        public String id() {
            return "redis";
        }

        @Override
        public void baseline(int i) {
            byte[] key = ("bench-bare:" + scope + ":" + i).getBytes(StandardCharsets.UTF_8);
            if (!"OK".equals(bare.set(key, key, SetArgs.Builder.nx().px(60_000))) || bare.get(key) == null) {
                throw new IllegalStateException("the bare SET NX did not take a fresh key");
            }
        }

        @Override
        public void close() {
            connection.close();
            client.shutdown();
        }
    }

    /** Lease mode on the DynamoDB store, one client; the table created if missing. */
    static final class DynamoDbTarget extends OutsideTarget {
        private static final String TABLE = "bench_leases";
        private final DynamoDbClient client;

        DynamoDbTarget(String endpoint) {
            if (endpoint == null || endpoint.isBlank()) {
                throw new IllegalStateException("set IDEMPOTENCY_DYNALITE_ENDPOINT (scripts/dynalite.sh start prints it)");
            }
            client = DynamoDbClient.builder().endpointOverride(URI.create(endpoint.strip())).region(Region.US_EAST_1)
                    .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("bench", "bench")))
                    .httpClient(UrlConnectionHttpClient.create()).build();
            DynamoDbLeasingStore store = DynamoDbLeasingStore.builder(client, TABLE).keyPrefix("bench").build();
            store.createTableIfMissing();
            lease(store);
        }

        @Override
        public String id() {
            return "dynamodb";
        }

        @Override
        public void baseline(int i) {
            Map<String, AttributeValue> key = Map.of("pk", AttributeValue.fromS("bench-bare#" + scope + ":" + i));
            client.putItem(r -> r.tableName(TABLE).item(key).conditionExpression("attribute_not_exists(pk)"));
            if (!client.getItem(r -> r.tableName(TABLE).key(key).consistentRead(true)).hasItem()) {
                throw new IllegalStateException("the bare conditional PutItem left no item");
            }
        }

        @Override
        public void close() {
            client.close();
        }
    }

    /** Lease mode on the JDBC store of a {@link Fixture}: the claim and the completion each a transaction of their own. */
    static final class JdbcTarget implements Target {
        private final Fixture fixture;
        private final String scope = "lease-" + UUID.randomUUID().toString().substring(0, 8);

        JdbcTarget(Database database) {
            fixture = Fixture.open(database);
            for (int i = 0; i < RECORDED; i++) {
                executed(fixture.leased.lease(call(scope, "recorded-" + i), attempt -> "done"));
            }
        }

        @Override
        public String id() {
            return fixture.database.id();
        }

        @Override
        public void baseline(int i) throws Exception {
            fixture.baseline();
        }

        @Override
        public void leaseFirst(int i) {
            executed(fixture.leased.lease(call(scope, "fresh-" + i), attempt -> "done"));
        }

        @Override
        public void leaseReplay(int i) {
            replayed(fixture.leased.lease(call(scope, "recorded-" + (i % RECORDED)), attempt -> "again"));
        }

        @Override
        public void close() throws Exception {
            fixture.close();
        }
    }

    /**
     * @param args {@code --stores list}, {@code --rounds n}, {@code --burst n}
     * @throws Exception if a store fails
     */
    public static void main(String[] args) throws Exception {
        String stores = "redis,h2mem,postgresql";
        int rounds = 30;
        int burst = 20;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--stores" -> stores = args[++i];
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--burst" -> burst = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]
                        + "; use --stores redis,h2mem,postgresql --rounds 30 --burst 20");
            }
        }
        run(List.of(stores.split(",")), rounds, burst).forEach(System.out::println);
    }

    /**
     * @return one line per store and operation: store, operation, median µs, median ratio to the
     *     store's baseline, median ratio to the Redis baseline (or {@code -} without Redis), rounds
     */
    static List<String> run(List<String> ids, int rounds, int burst) throws Exception {
        List<Target> targets = new ArrayList<>();
        Map<String, double[]> micros = new LinkedHashMap<>();
        try {
            for (String id : ids) {
                targets.add(target(id));
            }
            int[] next = new int[1];
            for (int r = -3; r < rounds; r++) { // three warm-up rounds, not kept
                int cells = targets.size() * OPERATIONS.size();
                for (int c = 0; c < cells; c++) {
                    // Rotate the order each round, so that no operation always follows the same one.
                    int cell = (c + Math.max(r, 0)) % cells;
                    Target t = targets.get(cell / OPERATIONS.size());
                    String op = OPERATIONS.get(cell % OPERATIONS.size());
                    double us = Interleaved.time(t.step(op), burst, next, new double[1]);
                    if (r >= 0) {
                        micros.computeIfAbsent(t.id() + "\t" + op, x -> new double[rounds])[r] = us;
                    }
                }
            }
        } finally {
            for (Target t : targets) {
                t.close();
            }
        }
        double[] redisBaseline = micros.get("redis\tbaseline");
        List<String> lines = new ArrayList<>();
        micros.keySet().stream().sorted().forEach(name -> {
            double[] own = micros.get(name.substring(0, name.indexOf('\t')) + "\tbaseline");
            lines.add(String.join("\t", name, String.format(Locale.ROOT, "%.1f", Interleaved.median(micros.get(name))),
                    String.format(Locale.ROOT, "%.2f", Interleaved.medianRatio(micros.get(name), own)),
                    redisBaseline == null ? "-" : String.format(Locale.ROOT, "%.2f", Interleaved.medianRatio(micros.get(name), redisBaseline)),
                    Integer.toString(rounds)));
        });
        return lines;
    }
}
