package dev.idempotency.benchmarks;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.Outcome;
import dev.idempotency.jdbc.dialect.PostgresDialect;
import dev.idempotency.jdbc.dialect.TableName;
import dev.idempotency.r2dbc.R2dbcIdempotency;
import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactoryOptions;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The reactive transactional mode beside a bare R2DBC transaction doing the same insert, on
 * PostgreSQL through r2dbc-postgresql and r2dbc-pool, interleaved the way {@link Interleaved} is (a
 * burst of each operation per round, the order shuffled anew each round with the same seed, the
 * median of the per-round ratios), with the blocking engine and its JDBC baseline in the same rounds
 * for comparison:
 *
 * <ul>
 *   <li>{@code r2dbcBaseline}: begin, the business {@code INSERT}, commit, on a pooled R2DBC connection;
 *   <li>{@code r2dbcFirst}: the same transaction with {@link R2dbcIdempotency#execute} around the
 *       insert, a fresh key each call;
 *   <li>{@code r2dbcReplay}: the same with a recorded key (the insert does not run);
 *   <li>{@code jdbcBaseline}, {@code jdbcFirst}, {@code jdbcReplay}: {@link Fixture}'s, over HikariCP.
 * </ul>
 *
 * <p>Each call is awaited before the next, from one thread: the figures are latencies of one
 * operation at a time, not throughput. Only the elapsed time is reported: the reactive work runs on
 * the driver's event loop, so the calling thread's CPU time would leave it out.
 *
 * <p>{@code java -cp benchmarks.jar dev.idempotency.benchmarks.ReactiveInterleaved [--rounds 40]
 * [--burst 50]}, with {@code IDEMPOTENCY_PG_URL}, {@code _USER} and {@code _PASSWORD} set: one
 * tab-separated line per operation ({@code operation, median µs, median ratio to its baseline,
 * rounds}), then the comparisons.
 */
public final class ReactiveInterleaved {

    /** The operations compared; each round runs them in a shuffled order. */
    static final List<String> OPERATIONS = List.of("r2dbcBaseline", "r2dbcFirst", "r2dbcReplay", "jdbcBaseline", "jdbcFirst", "jdbcReplay");

    /** {@code a÷b}: the median of the per-round ratios. */
    static final List<String> COMPARISONS = List.of("r2dbcFirst÷r2dbcBaseline", "r2dbcReplay÷r2dbcBaseline",
            "jdbcFirst÷jdbcBaseline", "jdbcReplay÷jdbcBaseline", "r2dbcBaseline÷jdbcBaseline", "r2dbcFirst÷jdbcFirst");

    private static final TableName TABLE = TableName.of("bench_r2dbc_record");
    private static final String ORDERS = "bench_r2dbc_order";
    private static final Duration WAIT = Duration.ofSeconds(60);

    private final ConnectionPool pool;
    private final R2dbcIdempotency engine = R2dbcIdempotency.builder(new PostgresDialect()).table(TABLE).build();
    private final String prefix = UUID.randomUUID().toString().substring(0, 8);
    private final AtomicLong ids = new AtomicLong();

    private ReactiveInterleaved(ConnectionPool pool) {
        this.pool = pool;
    }

    /**
     * @param args {@code --rounds n}, {@code --burst n}
     * @throws Exception if the database fails
     */
    public static void main(String[] args) throws Exception {
        int rounds = 40;
        int burst = 50;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--burst" -> burst = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i] + "; use --rounds 40 --burst 50");
            }
        }
        double before = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        run(rounds, burst).forEach(System.out::println);
        System.err.printf(Locale.ROOT, "postgresql: %d rounds of %d, load average %.2f before and %.2f after%n", rounds, burst,
                before, ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }

    /**
     * @param rounds rounds measured (after three of warm-up)
     * @param burst calls of each operation per round
     * @return one line per operation, then one per comparison
     * @throws Exception if an operation fails
     */
    static List<String> run(int rounds, int burst) throws Exception {
        Database database = Database.POSTGRESQL;
        ConnectionFactoryOptions options = ConnectionFactoryOptions.parse("r2dbc:" + database.server("IDEMPOTENCY_PG", "URL").substring("jdbc:".length()))
                .mutate()
                .option(ConnectionFactoryOptions.USER, database.server("IDEMPOTENCY_PG", "USER"))
                .option(ConnectionFactoryOptions.PASSWORD, database.server("IDEMPOTENCY_PG", "PASSWORD"))
                .build();
        ConnectionPool pool = new ConnectionPool(ConnectionPoolConfiguration.builder(ConnectionFactories.get(options))
                .initialSize(2).maxSize(2).build());
        Map<String, double[]> micros = new LinkedHashMap<>();
        try (Fixture fixture = Fixture.open(database)) {
            ReactiveInterleaved r = new ReactiveInterleaved(pool);
            r.createTables();
            int recorded = TransactionBenchmark.RECORDED;
            fixture.recordKeys(recorded);
            for (int i = 0; i < recorded; i++) {
                r.first(recordedKey(i));
            }
            Map<String, Interleaved.Step> steps = new LinkedHashMap<>();
            steps.put("r2dbcBaseline", i -> r.baseline());
            steps.put("r2dbcFirst", i -> r.first(IdempotencyKey.of("bench", r.prefix + "-" + i)));
            steps.put("r2dbcReplay", i -> r.replay(recordedKey(i % recorded)));
            steps.put("jdbcBaseline", i -> fixture.baseline());
            steps.put("jdbcFirst", i -> fixture.firstExecution());
            steps.put("jdbcReplay", i -> fixture.replay(Fixture.recordedKey(i % recorded)));
            int[] next = new int[1];
            for (int warm = 0; warm < 3; warm++) {
                for (String name : OPERATIONS) {
                    Interleaved.time(steps.get(name), burst, next, new double[1]);
                }
            }
            OPERATIONS.forEach(name -> micros.put(name, new double[rounds]));
            Random random = new Random(Interleaved.SEED);
            List<String> order = new ArrayList<>(OPERATIONS);
            for (int round = 0; round < rounds; round++) {
                Collections.shuffle(order, random);
                for (String name : order) {
                    micros.get(name)[round] = Interleaved.time(steps.get(name), burst, next, new double[1]);
                }
            }
        } finally {
            pool.dispose();
        }
        List<String> lines = new ArrayList<>();
        for (String name : OPERATIONS) {
            double[] baseline = micros.get(name.startsWith("r2dbc") ? "r2dbcBaseline" : "jdbcBaseline");
            lines.add(String.join("\t", name, String.format(Locale.ROOT, "%.1f", Interleaved.median(micros.get(name))),
                    String.format(Locale.ROOT, "%.3f", Interleaved.medianRatio(micros.get(name), baseline)), Integer.toString(rounds)));
        }
        for (String comparison : COMPARISONS) {
            String[] sides = comparison.split("÷");
            lines.add(String.join("\t", comparison, "-",
                    String.format(Locale.ROOT, "%.3f", Interleaved.medianRatio(micros.get(sides[0]), micros.get(sides[1]))),
                    Integer.toString(rounds)));
        }
        return lines;
    }

    private static IdempotencyKey recordedKey(int i) {
        return IdempotencyKey.of("bench", "recorded-" + i);
    }

    private void createTables() {
        List<String> ddl = List.of("DROP TABLE IF EXISTS " + ORDERS, "DROP TABLE IF EXISTS " + TABLE.pending().qualified(),
                "DROP TABLE IF EXISTS " + TABLE.qualified(),
                "CREATE TABLE " + ORDERS + " (id BIGINT NOT NULL PRIMARY KEY, amount BIGINT NOT NULL, note VARCHAR(64) NOT NULL)");
        Mono.usingWhen(pool.create(), c -> Flux.fromIterable(ddl)
                .concatMap(sql -> Flux.from(c.createStatement(sql).execute()).concatMap(result -> result.getRowsUpdated()))
                .then(), Connection::close).then(engine.createTableIfMissing(pool)).block(WAIT);
    }

    /** The business change: one row. */
    private Mono<Long> insertOrder(Connection c) {
        long id = ids.incrementAndGet();
        return Flux.from(c.createStatement("INSERT INTO " + ORDERS + " (id, amount, note) VALUES ($1, $2, $3)")
                        .bind("$1", id).bind("$2", 100L).bind("$3", "order").execute())
                .concatMap(result -> result.getRowsUpdated())
                .then(Mono.just(id));
    }

    /** Runs {@code body} in a transaction of a pooled connection, committed. */
    private <T> T inTransaction(Function<Connection, Mono<T>> body) {
        return Mono.usingWhen(pool.create(), c -> Mono.from(c.beginTransaction()).then(body.apply(c))
                        .flatMap(result -> Mono.from(c.commitTransaction()).thenReturn(result)),
                Connection::close,
                (c, failure) -> Mono.from(c.rollbackTransaction()).then(Mono.from(c.close())),
                Connection::close).block(WAIT);
    }

    private void baseline() {
        inTransaction(this::insertOrder);
    }

    private void first(IdempotencyKey key) {
        Outcome<Long> outcome = inTransaction(c -> engine.execute(key, c, () -> insertOrder(c)));
        if (!(outcome instanceof Outcome.Executed)) {
            throw new IllegalStateException("a fresh key gave " + outcome + " instead of Executed");
        }
    }

    private void replay(IdempotencyKey key) {
        Outcome<Long> outcome = inTransaction(c -> engine.execute(key, c, () -> insertOrder(c)));
        if (!(outcome instanceof Outcome.Replayed)) {
            throw new IllegalStateException("recorded key " + key + " gave " + outcome + " instead of Replayed");
        }
    }
}
