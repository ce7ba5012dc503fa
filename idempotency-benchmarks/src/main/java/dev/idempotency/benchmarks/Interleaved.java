package dev.idempotency.benchmarks;

import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

/**
 * The side-by-side comparison, interleaved: the operations of {@link TransactionBenchmark} (the
 * baselines, the library, the peers) run in turn, a short burst of each per round, in an order
 * shuffled anew each round (a fixed seed, so that two runs shuffle alike), many rounds, in one
 * thread. The peers run each way a user would run them: marking the key in a transaction of their
 * own before the business transaction ({@code springFirst}, {@code camelFirst}), marking it in the
 * business transaction itself ({@code springFirstInTx}, {@code camelFirstInTx}), and Spring
 * Integration's cheapest use, one auto-commit statement with no transaction bound, then the
 * business transaction ({@code springFirstAutoCommit}, {@code springDuplicateAutoCommit}). A machine whose load changes from second to second (other builds, other benchmarks)
 * then weighs on every operation alike, where JMH, running one benchmark after another, lets a busy
 * minute fall on one of them only. Each operation's figure is the median of its per-round mean; each
 * ratio is the median of the per-round ratios to the baseline of the same round. Beside the elapsed
 * time, the client thread's CPU time is measured too: on an embedded database, where an operation
 * waits for nothing, it is the operation's cost without the time other processes take from it.
 *
 * <p>{@code java -cp benchmarks.jar dev.idempotency.benchmarks.Interleaved [--db h2mem,postgresql,mariadb]
 * [--rounds 40] [--burst 25] [--out interleaved.tsv]}: one tab-separated line per database and
 * operation: {@code db, operation, median µs, median ratio to baseline, rounds, median CPU µs,
 * median CPU ratio to baseline}.
 */
public final class Interleaved {

    /** The operations compared; each round runs them in a shuffled order. */
    static final List<String> OPERATIONS = List.of("baseline", "springFirst", "springFirstInTx", "springFirstAutoCommit",
            "camelFirst", "camelFirstInTx", "firstExecution", "managedFirstExecution", "springDuplicate",
            "springDuplicateAutoCommit", "camelDuplicate", "replay", "managedReplay", "reservationBaseline",
            "reservationFirstExecution", "writeLastFirst", "writeLastReplay");

    /**
     * The library against the peers, each the median of the per-round ratios of the two operations:
     * {@code a÷b}, or {@code a÷cheapest(b, c, ...)} against the cheapest of those operations in each round.
     */
    static final List<String> COMPARISONS = List.of("firstExecution÷springFirstAutoCommit", "firstExecution÷springFirstInTx",
            "firstExecution÷springFirst", "managedFirstExecution÷springFirstAutoCommit",
            "replay÷cheapest(springDuplicate,springDuplicateAutoCommit,camelDuplicate)",
            "managedReplay÷cheapest(springDuplicate,springDuplicateAutoCommit,camelDuplicate)");

    /** The seed of the shuffles. */
    static final long SEED = 20_260_401L;

    private Interleaved() {
    }

    /** One operation, given the fixture and its index within the run (for recorded keys). */
    @FunctionalInterface
    private interface Op {
        void run(Fixture f, int i) throws Exception;
    }

    private static Op op(String name, int recorded) {
        return switch (name) {
            case "baseline" -> (f, i) -> f.baseline();
            case "springFirst" -> (f, i) -> f.peerFirst(Peers.Peer.SPRING);
            case "springFirstInTx" -> (f, i) -> f.peerFirstInTransaction(Peers.Peer.SPRING);
            case "springFirstAutoCommit" -> (f, i) -> f.springAutoCommitFirst();
            case "camelFirst" -> (f, i) -> f.peerFirst(Peers.Peer.CAMEL);
            case "camelFirstInTx" -> (f, i) -> f.peerFirstInTransaction(Peers.Peer.CAMEL);
            case "springDuplicateAutoCommit" -> (f, i) -> f.springAutoCommitDuplicate(Fixture.recordedKey(i % recorded));
            case "firstExecution" -> (f, i) -> f.firstExecution();
            case "managedFirstExecution" -> (f, i) -> f.managedFirstExecution();
            case "springDuplicate" -> (f, i) -> f.peerDuplicate(Peers.Peer.SPRING, Fixture.recordedKey(i % recorded));
            case "camelDuplicate" -> (f, i) -> f.peerDuplicate(Peers.Peer.CAMEL, Fixture.recordedKey(i % recorded));
            case "replay" -> (f, i) -> f.replay(Fixture.recordedKey(i % recorded));
            case "managedReplay" -> (f, i) -> f.managedReplay(Fixture.recordedKey(i % recorded));
            case "reservationBaseline" -> (f, i) -> f.reservationBaseline();
            case "reservationFirstExecution" -> (f, i) -> f.reservationFirstExecution();
            case "writeLastFirst" -> (f, i) -> f.writeLastFirst();
            case "writeLastReplay" -> (f, i) -> f.writeLastReplay(Fixture.recordedKey(i % recorded));
            default -> throw new IllegalArgumentException("unknown operation " + name);
        };
    }

    /**
     * @param args {@code --db list}, {@code --rounds n}, {@code --burst n}, {@code --out file}
     * @throws Exception if a database fails
     */
    public static void main(String[] args) throws Exception {
        String dbs = "h2mem,postgresql,mariadb";
        int rounds = 40;
        int burst = 25;
        Path out = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--db" -> dbs = args[++i];
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--burst" -> burst = Integer.parseInt(args[++i]);
                case "--out" -> out = Path.of(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]
                        + "; use --db h2mem,postgresql,mariadb --rounds 40 --burst 25 --out interleaved.tsv");
            }
        }
        List<String> lines = new ArrayList<>();
        for (String id : dbs.split(",")) {
            double before = LOAD.getSystemLoadAverage();
            lines.addAll(run(Database.byId(id), rounds, burst, TransactionBenchmark.RECORDED));
            System.err.printf(Locale.ROOT, "%s: %d rounds of %d, load average %.2f before and %.2f after%n", id, rounds, burst,
                    before, LOAD.getSystemLoadAverage());
        }
        if (out == null) {
            lines.forEach(System.out::println);
        } else {
            try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out, StandardCharsets.UTF_8))) {
                lines.forEach(w::println);
            }
        }
    }

    /**
     * @param database the database
     * @param rounds rounds measured (after three of warm-up)
     * @param burst runs of each operation per round
     * @param recorded keys recorded before the run, by the library and each peer, for the duplicates
     * @return one line per operation: db, operation, median µs, median ratio to the baseline, rounds,
     *     median CPU µs, median CPU ratio; then one line per comparison ({@link #COMPARISONS}): db,
     *     comparison, {@code -}, median ratio, rounds, {@code -}, median CPU ratio
     * @throws Exception if an operation fails
     */
    static List<String> run(Database database, int rounds, int burst, int recorded) throws Exception {
        Map<String, double[]> micros = new LinkedHashMap<>();
        Map<String, double[]> cpu = new LinkedHashMap<>();
        try (Fixture fixture = Fixture.open(database)) {
            fixture.recordKeys(recorded);
            int[] next = new int[1];
            for (int warm = 0; warm < 3; warm++) { // warm-up rounds, not kept
                for (String name : OPERATIONS) {
                    time(fixture, op(name, recorded), burst, next, new double[1]);
                }
            }
            for (String name : OPERATIONS) {
                micros.put(name, new double[rounds]);
                cpu.put(name, new double[rounds]);
            }
            Random random = new Random(SEED);
            List<String> order = new ArrayList<>(OPERATIONS);
            for (int r = 0; r < rounds; r++) {
                // A new order each round, so that no operation always follows the same one.
                Collections.shuffle(order, random);
                for (String name : order) {
                    double[] cpuMicros = new double[1];
                    micros.get(name)[r] = time(fixture, op(name, recorded), burst, next, cpuMicros);
                    cpu.get(name)[r] = cpuMicros[0];
                }
            }
        }
        List<String> lines = new ArrayList<>();
        for (String name : OPERATIONS) {
            String against = name.equals("reservationFirstExecution") ? "reservationBaseline" : "baseline";
            lines.add(String.join("\t", database.id(), name, String.format(Locale.ROOT, "%.1f", median(micros.get(name))),
                    String.format(Locale.ROOT, "%.3f", medianRatio(micros.get(name), micros.get(against))), Integer.toString(rounds),
                    String.format(Locale.ROOT, "%.1f", median(cpu.get(name))),
                    String.format(Locale.ROOT, "%.3f", medianRatio(cpu.get(name), cpu.get(against)))));
        }
        for (String comparison : COMPARISONS) {
            String[] sides = comparison.split("÷");
            lines.add(String.join("\t", database.id(), comparison, "-",
                    String.format(Locale.ROOT, "%.3f", medianRatio(micros.get(sides[0]), cheapest(micros, sides[1]))),
                    Integer.toString(rounds), "-",
                    String.format(Locale.ROOT, "%.3f", medianRatio(cpu.get(sides[0]), cheapest(cpu, sides[1])))));
        }
        return lines;
    }

    /** @return per round, the figure of {@code side}, or the least of those named in {@code cheapest(a,b,...)} */
    private static double[] cheapest(Map<String, double[]> figures, String side) {
        if (!side.startsWith("cheapest(")) {
            return figures.get(side);
        }
        String[] names = side.substring("cheapest(".length(), side.length() - 1).split(",");
        double[] least = figures.get(names[0]).clone();
        for (String name : names) {
            double[] f = figures.get(name);
            for (int r = 0; r < least.length; r++) {
                least[r] = Math.min(least[r], f[r]);
            }
        }
        return least;
    }

    static double medianRatio(double[] values, double[] against) {
        double[] ratios = new double[values.length];
        for (int r = 0; r < values.length; r++) {
            ratios[r] = values[r] / against[r];
        }
        return median(ratios);
    }

    private static final OperatingSystemMXBean LOAD = ManagementFactory.getOperatingSystemMXBean();

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    /** @return the mean elapsed µs of {@code burst} runs of the operation; the mean CPU µs into {@code cpuMicros[0]} */
    private static double time(Fixture fixture, Op op, int burst, int[] next, double[] cpuMicros) throws Exception {
        return time(i -> op.run(fixture, i), burst, next, cpuMicros);
    }

    /** One run of an operation, given its index within the run. */
    @FunctionalInterface
    interface Step {
        void run(int i) throws Exception;
    }

    /** @return the mean elapsed µs of {@code burst} runs of {@code step}; the mean CPU µs into {@code cpuMicros[0]} */
    static double time(Step op, int burst, int[] next, double[] cpuMicros) throws Exception {
        long cpuStarted = THREADS.getCurrentThreadCpuTime();
        long started = System.nanoTime();
        for (int i = 0; i < burst; i++) {
            op.run(next[0]++);
        }
        long elapsed = System.nanoTime() - started;
        cpuMicros[0] = (THREADS.getCurrentThreadCpuTime() - cpuStarted) / 1000.0 / burst;
        return elapsed / 1000.0 / burst;
    }

    static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
