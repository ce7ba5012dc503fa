package dev.idempotency.benchmarks;

import dev.idempotency.testsupport.Json;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Turns JMH's JSON results ({@code -rf json}) and the counting pass's output into the Markdown
 * tables of {@code docs/performance.md}: latencies and their ratios to the baseline measured in
 * the same run, throughput under contention, allocation per operation, statements per
 * operation, purge speed, the machine, and the targets met or missed.
 *
 * <p>{@code java -cp benchmarks.jar dev.idempotency.benchmarks.BenchReport results.json [more.json ...]
 * [--counts counts.tsv] [--command "scripts/bench"] [--batch]}, Markdown on standard output; with
 * {@code --batch}, the batch job's tables ({@link BatchBenchmark}, counts of
 * {@code StatementCounts --batch}) instead.
 */
public final class BenchReport {

    private static final String PACKAGE = "dev.idempotency.benchmarks.";
    private static final List<String> ORDER = List.of("h2mem", "h2file", "sqlite", "postgresql", "mariadb");

    /** {benchmark short name, db} -> result object. */
    private final Map<String, Map<String, Object>> results = new LinkedHashMap<>();
    private final List<StatementCounts.Row> counts = new ArrayList<>();
    private final Map<String, String> versions = new LinkedHashMap<>();
    private final List<String> dbs = new ArrayList<>();

    BenchReport() {
    }

    /**
     * @param args JSON result files, then optionally {@code --counts file} and {@code --command text}
     * @throws IOException if a file cannot be read
     */
    public static void main(String[] args) throws IOException {
        BenchReport report = new BenchReport();
        String command = null;
        boolean batch = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--counts" -> report.readCounts(Path.of(args[++i]));
                case "--command" -> command = args[++i];
                case "--batch" -> batch = true;
                default -> report.readResults(Path.of(args[i]));
            }
        }
        System.out.print(batch ? report.batchMarkdown(command) : report.markdown(command));
    }

    @SuppressWarnings("unchecked")
    void readResults(Path file) throws IOException {
        if (!Files.exists(file) || Files.size(file) == 0) {
            return;
        }
        for (Object o : (List<Object>) Json.parse(Files.readString(file, StandardCharsets.UTF_8))) {
            Map<String, Object> r = (Map<String, Object>) o;
            String name = ((String) r.get("benchmark")).replace(PACKAGE, "");
            String db = String.valueOf(((Map<String, Object>) r.getOrDefault("params", Map.of())).get("db"));
            results.put(name + "|" + db, r);
            addDb(db);
        }
    }

    void readCounts(Path file) throws IOException {
        if (!Files.exists(file)) {
            return;
        }
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            if (line.startsWith(StatementCounts.VERSION)) {
                String[] f = line.split("\t", 3);
                versions.put(f[1], f[2]);
            } else if (!line.isBlank() && !line.equals(StatementCounts.HEADER)) {
                StatementCounts.Row row = StatementCounts.Row.parse(line);
                counts.add(row);
                addDb(row.db());
            }
        }
    }

    private void addDb(String db) {
        if (!dbs.contains(db)) {
            dbs.add(db);
            dbs.sort((a, b) -> Integer.compare(rank(a), rank(b)));
        }
    }

    private static int rank(String db) {
        int i = ORDER.indexOf(db);
        return i < 0 ? ORDER.size() : i;
    }

    private static String title(String db) {
        try {
            return Database.byId(db).title();
        } catch (IllegalArgumentException e) {
            return db;
        }
    }

    /** @return the primary score, or NaN if the benchmark did not run */
    @SuppressWarnings("unchecked")
    private double score(String benchmark, String db) {
        Map<String, Object> r = results.get(benchmark + "|" + db);
        if (r == null) {
            return Double.NaN;
        }
        return number(((Map<String, Object>) r.get("primaryMetric")).get("score"));
    }

    @SuppressWarnings("unchecked")
    private double error(String benchmark, String db) {
        Map<String, Object> r = results.get(benchmark + "|" + db);
        return r == null ? Double.NaN : number(((Map<String, Object>) r.get("primaryMetric")).get("scoreError"));
    }

    @SuppressWarnings("unchecked")
    private double secondary(String benchmark, String db, String metric) {
        Map<String, Object> r = results.get(benchmark + "|" + db);
        if (r == null) {
            return Double.NaN;
        }
        Map<String, Object> m = (Map<String, Object>) ((Map<String, Object>) r.getOrDefault("secondaryMetrics", Map.of())).get(metric);
        return m == null ? Double.NaN : number(m.get("score"));
    }

    @SuppressWarnings("unchecked")
    private String param(String benchmark, String db, String name) {
        Map<String, Object> r = results.get(benchmark + "|" + db);
        return r == null ? null : String.valueOf(((Map<String, Object>) r.get("params")).get(name));
    }

    private static double number(Object o) {
        if (o instanceof Double d) {
            return d;
        }
        try {
            return Double.parseDouble(String.valueOf(o));
        } catch (NumberFormatException e) {
            return Double.NaN;
        }
    }

    private StatementCounts.Row count(String db, String operation) {
        return counts.stream().filter(r -> r.db().equals(db) && r.operation().equals(operation)).findFirst().orElse(null);
    }

    String markdown(String command) {
        StringBuilder md = new StringBuilder();
        md.append("### One transaction at a time\n\n")
                .append("Mean time of one transaction (borrow a pooled connection, run, commit), in µs, with JMH's 99.9% error;"
                        + " ratios to the baseline of the same database in the same run; allocation per transaction from"
                        + " `-prof gc` (`gc.alloc.rate.norm`, bytes).\n\n")
                .append("| database | baseline µs | first execution µs | first / baseline | replay µs | replay / baseline"
                        + " | alloc. baseline B | alloc. first B | alloc. replay B |\n")
                .append("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        String tx = "TransactionBenchmark.";
        for (String db : dbs) {
            double base = score(tx + "baseline", db);
            double first = score(tx + "firstExecution", db);
            double replay = score(tx + "replay", db);
            md.append("| ").append(title(db))
                    .append(" | ").append(withError(base, error(tx + "baseline", db)))
                    .append(" | ").append(withError(first, error(tx + "firstExecution", db)))
                    .append(" | ").append(ratio(first, base))
                    .append(" | ").append(withError(replay, error(tx + "replay", db)))
                    .append(" | ").append(ratio(replay, base))
                    .append(" | ").append(whole(secondary(tx + "baseline", db, "gc.alloc.rate.norm")))
                    .append(" | ").append(whole(secondary(tx + "firstExecution", db, "gc.alloc.rate.norm")))
                    .append(" | ").append(whole(secondary(tx + "replay", db, "gc.alloc.rate.norm")))
                    .append(" |\n");
        }

        peersTable(md);
        writeLastTable(md);

        String ct = "ContentionBenchmark.";
        md.append("\n### ").append(Database.THREADS).append(" threads at once\n\n")
                .append("Transactions per second (higher is better). *Distinct keys*: every transaction a fresh key."
                        + " *Hot key*: every ").append(Database.THREADS).append(" consecutive attempts share one key, so one"
                        + " runs the work and the others wait for it and replay; a transaction that fails is retried whole"
                        + " (the outcomes and retries counted over the measured iterations are shown).\n\n")
                .append("| database | baseline tx/s | distinct keys tx/s | distinct / baseline | hot key tx/s | hot key / baseline"
                        + " | hot key: executed / replayed / in progress / retried | alloc. distinct B |\n")
                .append("|---|---:|---:|---:|---:|---:|---|---:|\n");
        for (String db : dbs) {
            double base = score(ct + "baseline", db);
            double distinct = score(ct + "distinctKeys", db);
            double hot = score(ct + "hotKey", db);
            md.append("| ").append(title(db))
                    .append(" | ").append(whole(base))
                    .append(" | ").append(whole(distinct))
                    .append(" | ").append(ratio(distinct, base))
                    .append(" | ").append(whole(hot))
                    .append(" | ").append(ratio(hot, base))
                    .append(" | ").append(Double.isNaN(hot) ? "–" : whole(secondary(ct + "hotKey", db, "executed")) + " / "
                            + whole(secondary(ct + "hotKey", db, "replayed")) + " / "
                            + whole(secondary(ct + "hotKey", db, "inProgress")) + " / "
                            + whole(secondary(ct + "hotKey", db, "retries")))
                    .append(" | ").append(whole(secondary(ct + "distinctKeys", db, "gc.alloc.rate.norm")))
                    .append(" |\n");
        }

        md.append("\n### Purge\n\n")
                .append("Expired records removed per second by `purgeExpired(tx, batch)` in a loop of short transactions,"
                        + " until none is left.\n\n")
                .append("| database | rows | batch | rows/s | time ms |\n|---|---:|---:|---:|---:|\n");
        String pb = "PurgeBenchmark.purgeAll";
        for (String db : dbs) {
            double ms = score(pb, db);
            String rows = param(pb, db, "rows");
            String why = Double.isNaN(ms) ? failure(db, "purgeBatch") : "";
            md.append("| ").append(title(db))
                    .append(" | ").append(rows == null ? "–" : rows)
                    .append(" | ").append(rows == null ? "–" : param(pb, db, "batch"))
                    .append(" | ").append(Double.isNaN(ms) ? "failed" + why : whole(Double.parseDouble(rows) / ms * 1000))
                    .append(" | ").append(whole(ms))
                    .append(" |\n");
        }

        md.append("\n### Statements per operation (counted)\n\n")
                .append("Counted by a JDBC wrapper in a separate pass (not in the timed runs): statement executions,"
                        + " savepoint calls (set / roll back to / release: one round trip each on the servers), commits;"
                        + " the sequence of one operation; and the mean time of each kind of call in that pass (µs),"
                        + " a rough profile of where the time goes.\n\n")
                .append("| database | operation | statements | savepoint calls | commits | sequence | mean µs per call |\n")
                .append("|---|---|---:|---:|---:|---|---|\n");
        for (String db : dbs) {
            for (String op : StatementCounts.OPERATIONS) {
                StatementCounts.Row r = count(db, op);
                if (r == null) {
                    continue;
                }
                md.append("| ").append(title(db)).append(" | ").append(opTitle(op));
                if (!r.error().isEmpty()) {
                    md.append(" | – | – | – | failed: ").append(shorten(r.error())).append(" | |\n");
                    continue;
                }
                md.append(" | ").append(num(r.statements())).append(" | ").append(num(r.savepoints()))
                        .append(" | ").append(num(r.commits())).append(" | ").append(r.sequence())
                        .append(" | ").append(r.times().replace("=", " ")).append(" |\n");
            }
        }

        md.append("\n### Targets\n\n")
                .append("Statements below are statement executions plus savepoint calls, besides the commit.\n\n")
                .append("| target | PostgreSQL | MariaDB |\n|---|---|---|\n");
        md.append("| first execution ≤ 1.25 × baseline | ").append(target("postgresql", "firstExecution", 1.25))
                .append(" | ").append(target("mariadb", "firstExecution", 1.25)).append(" |\n");
        md.append("| replay ≤ 0.5 × baseline | ").append(target("postgresql", "replay", 0.5))
                .append(" | ").append(target("mariadb", "replay", 0.5)).append(" |\n");
        md.append("| first execution ≤ baseline + 2 statements | ").append(statementTarget("postgresql", "firstExecution", 2))
                .append(" | ").append(statementTarget("mariadb", "firstExecution", 2)).append(" (not a target) |\n");
        md.append("| replay ≤ 1 statement | ").append(statementTarget("postgresql", "replay", 1))
                .append(" | ").append(statementTarget("mariadb", "replay", 1)).append(" (not a target) |\n");

        return footer(md, "###", command);
    }

    /** Appends the machine, the database versions and the command under a heading of {@code level}. */
    private String footer(StringBuilder md, String level, String command) {
        md.append('\n').append(level).append(" Machine\n\n").append(machine());
        for (String db : dbs) {
            String v = versions.get(db);
            if (v != null) {
                md.append("- ").append(title(db)).append(": ").append(v).append('\n');
            }
        }
        if (command != null) {
            md.append("\nReproduce with `").append(command).append("`.\n");
        }
        return md.toString();
    }

    /**
     * @param command the command that produced the results, or {@code null}
     * @return the batch job's tables: items per second of the three ways and their ratios, the
     *     statements per chunk, the targets, the machine
     */
    String batchMarkdown(String command) {
        StringBuilder md = new StringBuilder();
        String bb = "BatchBenchmark.";
        md.append("#### Items per second\n\n")
                .append("A job of new items in chunks, one transaction per chunk, each item one business row (sent as one JDBC"
                        + " batch per chunk): the rows alone (*baseline*), one `Idempotency.execute` per item (*per item*), one"
                        + " `executeChunk` per chunk (*chunk API*). Items per second over the whole job (JMH single shot, mean of"
                        + " the measured iterations, each on empty tables).\n\n")
                .append("| database | items | chunk | baseline items/s | per item items/s | chunk API items/s"
                        + " | chunk / baseline | chunk / per item | per item / baseline |\n")
                .append("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (String db : dbs) {
            String items = param(bb + "baseline", db, "items");
            if (items == null) {
                items = param(bb + "chunkApi", db, "items");
            }
            if (items == null) {
                continue;
            }
            double base = itemsPerSecond(bb + "baseline", db);
            double perItem = itemsPerSecond(bb + "perItemExecute", db);
            double chunk = itemsPerSecond(bb + "chunkApi", db);
            md.append("| ").append(title(db)).append(" | ").append(items)
                    .append(" | ").append(param(bb + "chunkApi", db, "chunk") == null ? "–" : param(bb + "chunkApi", db, "chunk"))
                    .append(" | ").append(whole(base)).append(" | ").append(whole(perItem)).append(" | ").append(whole(chunk))
                    .append(" | ").append(ratio(chunk, base)).append(" | ").append(ratio(chunk, perItem))
                    .append(" | ").append(ratio(perItem, base)).append(" |\n");
        }
        md.append("\n#### Statements per chunk (counted)\n\n")
                .append("Counted by the JDBC wrapper in a separate pass, per chunk: statement executions (a JDBC batch counts"
                        + " as one), savepoint calls, commits; the calls of one chunk; and the mean time of each kind of call"
                        + " in that pass (µs), a rough profile of where the time goes.\n\n")
                .append("| database | way | chunks counted | statements | savepoint calls | commits | calls of one chunk"
                        + " | calls: count:mean µs |\n")
                .append("|---|---|---:|---:|---:|---:|---|---|\n");
        for (String db : dbs) {
            for (String op : StatementCounts.BATCH_OPERATIONS) {
                StatementCounts.Row r = count(db, op);
                if (r == null) {
                    continue;
                }
                md.append("| ").append(title(db)).append(" | ").append(batchTitle(op));
                if (!r.error().isEmpty()) {
                    md.append(" | – | – | – | – | failed: ").append(shorten(r.error())).append(" | |\n");
                    continue;
                }
                md.append(" | ").append(r.ops()).append(" | ").append(num(r.statements())).append(" | ").append(num(r.savepoints()))
                        .append(" | ").append(num(r.commits())).append(" | ").append(r.sequence())
                        .append(" | ").append(r.times().replace("=", " ")).append(" |\n");
            }
        }
        md.append("\n#### Targets\n\n| target | PostgreSQL | MariaDB |\n|---|---|---|\n")
                .append("| chunk API ≥ 0.5 × baseline | ").append(batchTarget("postgresql", "baseline", 0.5))
                .append(" | ").append(batchTarget("mariadb", "baseline", 0.5)).append(" |\n")
                .append("| chunk API ≥ 5 × per item | ").append(batchTarget("postgresql", "perItemExecute", 5))
                .append(" | ").append(batchTarget("mariadb", "perItemExecute", 5)).append(" |\n");
        return footer(md, "####", command);
    }

    private double itemsPerSecond(String benchmark, String db) {
        double ms = score(benchmark, db);
        String items = param(benchmark, db, "items");
        return Double.isNaN(ms) || items == null ? Double.NaN : Double.parseDouble(items) / ms * 1000;
    }

    private String batchTarget(String db, String against, double factor) {
        double chunk = itemsPerSecond("BatchBenchmark.chunkApi", db);
        double other = itemsPerSecond("BatchBenchmark." + against, db);
        if (Double.isNaN(chunk) || Double.isNaN(other)) {
            return "not measured";
        }
        double r = chunk / other;
        return (r >= factor ? "met: " : "missed: ") + String.format(Locale.ROOT, "%.2f", r);
    }

    private static String batchTitle(String op) {
        return switch (op) {
            case "batchBaseline" -> "baseline";
            case "batchPerItem" -> "per item";
            case "batchChunk" -> "chunk API";
            default -> op;
        };
    }

    /** The peers' operations and the library's, as the peers table shows them, in order. */
    private static final List<String> PEER_COLUMNS = List.of("baseline", "reservationBaseline", "springFirst", "springDuplicate",
            "camelFirst", "camelDuplicate", "firstExecution", "managedFirstExecution", "reservationFirstExecution", "replay",
            "managedReplay");

    private void peersTable(StringBuilder md) {
        String tx = "TransactionBenchmark.";
        md.append("\n### Beside the peers\n\n")
                .append("Mean µs per operation in the same run, and in brackets the ratio to the one-`INSERT` baseline."
                        + " *Spring*: Spring Integration `JdbcMetadataStore.putIfAbsent` in a Spring transaction of its own;"
                        + " *Camel*: Camel `JdbcMessageIdRepository.add` (its own transaction); each followed, for a new key,"
                        + " by the baseline's business transaction, and for a duplicate by nothing. *Library*: `execute` in"
                        + " the caller's transaction; *managed*: `ManagedIdempotency.execute` over `JdbcTransactions`, the"
                        + " transaction the library runs. *Reservation*: a conditional stock `UPDATE` and a reservation"
                        + " `INSERT`, alone and wrapped in `execute`.\n\n")
                .append("| database | baseline | reservation | Spring first | Spring duplicate | Camel first | Camel duplicate"
                        + " | library first | managed first | reservation + library | library replay | managed replay"
                        + " | library first / Spring first | managed first / Spring first |\n")
                .append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (String db : dbs) {
            double base = score(tx + "baseline", db);
            md.append("| ").append(title(db));
            for (String op : PEER_COLUMNS) {
                double v = score(tx + op, db);
                md.append(" | ").append(Double.isNaN(v) ? "–" : fixed(v)); // – : the operation does not run there (Spring on SQLite)
                if (!Double.isNaN(v) && !op.equals("baseline")) {
                    double against = op.equals("reservationFirstExecution") ? score(tx + "reservationBaseline", db) : base;
                    md.append(" (").append(ratio(v, against)).append(")");
                }
            }
            double spring = score(tx + "springFirst", db);
            md.append(" | ").append(ratio(score(tx + "firstExecution", db), spring))
                    .append(" | ").append(ratio(score(tx + "managedFirstExecution", db), spring)).append(" |\n");
        }
        md.append("\n*Reservation + library* is in brackets against the reservation alone.\n");
    }

    private void writeLastTable(StringBuilder md) {
        String tx = "TransactionBenchmark.";
        md.append("\n### Write-last mode\n\n")
                .append("`ManagedIdempotency.writeLast`: the work first, then the completed record, written with the"
                        + " commit (in one round trip on PostgreSQL). Mean µs, and in brackets the ratio to the baseline of the"
                        + " same run; target on PostgreSQL: first at most 1.2 × the baseline. A replay runs the work and rolls it"
                        + " back before it answers.\n\n")
                .append("| database | baseline | write-last first | write-last replay | managed first |\n")
                .append("|---|---:|---:|---:|---:|\n");
        for (String db : dbs) {
            double base = score(tx + "baseline", db);
            md.append("| ").append(title(db)).append(" | ").append(fixed(base));
            for (String op : List.of("writeLastFirst", "writeLastReplay", "managedFirstExecution")) {
                double v = score(tx + op, db);
                md.append(" | ").append(fixed(v)).append(Double.isNaN(v) ? "" : " (" + ratio(v, base) + ")");
            }
            md.append(" |\n");
        }
    }

    private String target(String db, String op, double limit) {
        double base = score("TransactionBenchmark.baseline", db);
        double value = score("TransactionBenchmark." + op, db);
        if (Double.isNaN(base) || Double.isNaN(value)) {
            return "not measured";
        }
        double r = value / base;
        return (r <= limit ? "met: " : "missed: ") + String.format(Locale.ROOT, "%.2f", r);
    }

    private String statementTarget(String db, String op, int limit) {
        StatementCounts.Row base = count(db, "baseline");
        StatementCounts.Row r = count(db, op);
        if (base == null || r == null || !r.error().isEmpty() || !base.error().isEmpty()) {
            return "not counted";
        }
        double sent = r.statements() + r.savepoints();
        if (op.equals("replay")) {
            return (sent <= limit ? "met: " : "missed: ") + num(sent);
        }
        double extra = sent - base.statements() - base.savepoints();
        return (extra <= limit ? "met: +" : "missed: +") + num(extra);
    }

    private String failure(String db, String op) {
        StatementCounts.Row r = count(db, op);
        return r == null || r.error().isEmpty() ? "" : " (" + shorten(r.error()) + ")";
    }

    private static String opTitle(String op) {
        return switch (op) {
            case "firstExecution" -> "first execution";
            case "purgeBatch" -> "purge (one batch of 100)";
            case "managedFirstExecution" -> "first execution, managed";
            case "reservationBaseline" -> "reservation";
            case "springFirst" -> "Spring first";
            case "springDuplicate" -> "Spring duplicate";
            case "camelFirst" -> "Camel first";
            case "camelDuplicate" -> "Camel duplicate";
            case "springFirstInTx" -> "Spring first, in the business transaction";
            case "camelFirstInTx" -> "Camel first, in the business transaction";
            case "springFirstAutoCommit" -> "Spring first, auto-commit mark";
            case "springDuplicateAutoCommit" -> "Spring duplicate, auto-commit";
            case "writeLastFirst" -> "write-last first";
            case "writeLastReplay" -> "write-last replay";
            default -> op;
        };
    }

    private static String shorten(String error) {
        int cause = error.lastIndexOf("caused by ");
        String s = cause >= 0 ? error.substring(cause + "caused by ".length()) : error;
        s = s.replace("|", "/");
        return s.length() > 160 ? s.substring(0, 157) + "..." : s;
    }

    private static String machine() {
        StringBuilder m = new StringBuilder();
        m.append("- CPU: ").append(Runtime.getRuntime().availableProcessors()).append(" cores");
        String model = cpuModel();
        if (model != null) {
            m.append(", ").append(model);
        }
        m.append('\n');
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            m.append("- Memory: ").append(Math.round(os.getTotalMemorySize() / (1024.0 * 1024 * 1024))).append(" GiB\n");
        }
        m.append("- OS: ").append(System.getProperty("os.name")).append(' ').append(System.getProperty("os.arch")).append('\n');
        m.append("- JDK: ").append(System.getProperty("java.vm.name")).append(' ').append(System.getProperty("java.runtime.version"))
                .append('\n');
        return m.toString();
    }

    private static String cpuModel() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).strip();
                }
            }
        } catch (IOException | RuntimeException e) {
            // Not Linux: the core count alone.
        }
        return null;
    }

    private static String withError(double score, double error) {
        if (Double.isNaN(score)) {
            return "failed";
        }
        return Double.isNaN(error) ? fixed(score) : fixed(score) + " ± " + fixed(error);
    }

    private static String fixed(double d) {
        return String.format(Locale.ROOT, d >= 100 ? "%.0f" : "%.1f", d);
    }

    private static String whole(double d) {
        return Double.isNaN(d) ? "–" : String.format(Locale.ROOT, "%,.0f", d);
    }

    private static String ratio(double value, double base) {
        return Double.isNaN(value) || Double.isNaN(base) || base == 0 ? "–" : String.format(Locale.ROOT, "%.2f", value / base);
    }

    private static String num(double d) {
        return d == Math.rint(d) ? Long.toString((long) d) : String.format(Locale.ROOT, "%.2f", d);
    }
}
