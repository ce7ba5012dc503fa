package dev.idempotency.benchmarks;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.Outcome;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Where H2's throughput goes when several threads write at once: the baseline (one business
 * {@code INSERT}, committed), the same transaction with the rows the library writes but written by
 * hand (an {@code INSERT} of a record-shaped row into a table of the record's schema, then also its
 * completing {@code UPDATE}), and the library itself, each run by the same threads on distinct keys,
 * in turn, for a second per round. The figures separate what H2 charges for each row written in a
 * transaction from what the library adds on top. {@code ;LOCK_MODE=0} (H2's table locks off) can be
 * appended to the URL to see whether table locking is what limits it.
 *
 * <p>{@code java -cp benchmarks.jar dev.idempotency.benchmarks.H2Writers [--threads 16] [--rounds 7]
 * [--url-suffix ";LOCK_MODE=0"]}: one line per way: median transactions per second and the median
 * ratio to the baseline of the same round.
 */
public final class H2Writers {

    private static final List<String> WAYS = List.of("baseline", "bareInsert", "bareInsertAndUpdate", "library");

    private H2Writers() {
    }

    /**
     * @param args {@code --threads n}, {@code --rounds n}, {@code --url-suffix text}
     * @throws Exception if the database fails
     */
    public static void main(String[] args) throws Exception {
        int threads = 16;
        int rounds = 7;
        String suffix = "";
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--threads" -> threads = Integer.parseInt(args[++i]);
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--url-suffix" -> suffix = args[++i];
                default -> throw new IllegalArgumentException("unknown argument " + args[i]
                        + "; use --threads 16 --rounds 7 --url-suffix ';LOCK_MODE=0'");
            }
        }
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl("jdbc:h2:mem:writers-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000" + suffix);
        config.setMaximumPoolSize(threads);
        config.setAutoCommit(false);
        try (HikariDataSource pool = new HikariDataSource(config)) {
            JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().build();
            store.createTableIfMissing(pool);
            JdbcIdempotencyStore.builder().table("bare_record").build().createTableIfMissing(pool);
            try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
                s.execute("CREATE TABLE bench_order (id BIGINT NOT NULL PRIMARY KEY, amount BIGINT NOT NULL, note VARCHAR(64) NOT NULL)");
                c.commit();
            }
            Idempotency<Connection> engine = Idempotency.builder(store).build();
            AtomicLong ids = new AtomicLong();
            Map<String, double[]> perSecond = new LinkedHashMap<>();
            Map<String, double[]> ratios = new LinkedHashMap<>();
            WAYS.forEach(w -> {
                perSecond.put(w, new double[0]);
                ratios.put(w, new double[0]);
            });
            for (int r = -1; r < rounds; r++) { // round -1 warms up
                Map<String, Double> round = new LinkedHashMap<>();
                for (int k = 0; k < WAYS.size(); k++) {
                    String way = WAYS.get((k + Math.max(0, r)) % WAYS.size());
                    round.put(way, run(pool, engine, way, threads, ids));
                }
                if (r >= 0) {
                    for (String way : WAYS) {
                        perSecond.put(way, append(perSecond.get(way), round.get(way)));
                        ratios.put(way, append(ratios.get(way), round.get(way) / round.get("baseline")));
                    }
                }
            }
            System.out.printf(Locale.ROOT, "H2 in memory, %d threads, %d rounds%s%n", threads, rounds,
                    suffix.isEmpty() ? "" : " (" + suffix + ")");
            for (String way : WAYS) {
                System.out.printf(Locale.ROOT, "%-20s %10.0f tx/s  %6.3f x baseline%n", way, median(perSecond.get(way)),
                        median(ratios.get(way)));
            }
        }
    }

    /** @return transactions per second of one way, run by {@code threads} threads for a second */
    private static double run(HikariDataSource pool, Idempotency<Connection> engine, String way, int threads, AtomicLong ids)
            throws InterruptedException {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong done = new AtomicLong();
        List<Throwable> failures = new ArrayList<>();
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            workers[t] = new Thread(() -> {
                try {
                    while (!stop.get()) {
                        once(pool, engine, way, ids.incrementAndGet());
                        done.incrementAndGet();
                    }
                } catch (Exception | Error e) {
                    synchronized (failures) {
                        failures.add(e);
                    }
                }
            });
        }
        long started = System.nanoTime();
        for (Thread w : workers) {
            w.start();
        }
        Thread.sleep(1000);
        stop.set(true);
        for (Thread w : workers) {
            w.join();
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        if (!failures.isEmpty()) {
            throw new IllegalStateException(way + " failed", failures.get(0));
        }
        return done.get() / seconds;
    }

    private static void once(HikariDataSource pool, Idempotency<Connection> engine, String way, long id) throws SQLException {
        try (Connection c = pool.getConnection()) {
            switch (way) {
                case "baseline" -> insertOrder(c, id);
                case "bareInsert", "bareInsertAndUpdate" -> {
                    try (PreparedStatement s = c.prepareStatement("INSERT INTO bare_record"
                            + " (scope, key_id, fingerprint, status, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)")) {
                        s.setString(1, "bench");
                        s.setString(2, "k" + id);
                        s.setString(3, "0".repeat(64));
                        s.setString(4, "IN_PROGRESS");
                        s.setLong(5, System.currentTimeMillis());
                        s.setLong(6, System.currentTimeMillis() + 86_400_000L);
                        s.executeUpdate();
                    }
                    insertOrder(c, id);
                    if (way.equals("bareInsertAndUpdate")) {
                        try (PreparedStatement s = c.prepareStatement("UPDATE bare_record SET status = ?, result_codec = ?,"
                                + " result = ?, completed_at = ?, expires_at = ? WHERE scope = ? AND key_id = ?")) {
                            s.setString(1, "COMPLETED");
                            s.setString(2, "long");
                            s.setBytes(3, new byte[8]);
                            s.setLong(4, System.currentTimeMillis());
                            s.setLong(5, System.currentTimeMillis() + 86_400_000L);
                            s.setString(6, "bench");
                            s.setString(7, "k" + id);
                            s.executeUpdate();
                        }
                    }
                }
                case "library" -> {
                    Outcome<Long> outcome = engine.execute(IdempotencyKey.of("bench", "k" + id), c, () -> insertOrder(c, id));
                    if (!(outcome instanceof Outcome.Executed)) {
                        throw new IllegalStateException("a fresh key gave " + outcome);
                    }
                }
                default -> throw new IllegalArgumentException(way);
            }
            c.commit();
        }
    }

    private static long insertOrder(Connection c, long id) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("INSERT INTO bench_order (id, amount, note) VALUES (?, ?, ?)")) {
            s.setLong(1, id);
            s.setLong(2, id % 1000);
            s.setString(3, "order " + id);
            s.executeUpdate();
        }
        return id;
    }

    private static double[] append(double[] values, double value) {
        double[] more = Arrays.copyOf(values, values.length + 1);
        more[values.length] = value;
        return more;
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
