package dev.idempotency.benchmarks;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;

/**
 * The counting pass: runs each operation of the benchmarks through a {@link CountingDataSource}
 * and writes, per database and operation, the statements, savepoint calls, commits and rollbacks
 * per operation, the sequence of one operation, and the mean time of each kind of call (a
 * profile of where the time goes). Separate from the timed runs, so that counting costs them
 * nothing.
 *
 * <p>{@code java -cp benchmarks.jar dev.idempotency.benchmarks.StatementCounts [--db h2mem,postgresql,...]
 * [--ops 200] [--out counts.tsv]}: one tab-separated line per database and operation (see
 * {@link Row}); the report reads it. With {@code --batch}, the batch job's three ways instead,
 * per chunk of {@code --chunk} items (500) over {@code --ops} chunks: {@code batchBaseline},
 * {@code batchPerItem}, {@code batchChunk}.
 */
public final class StatementCounts {

    /** The operations {@link #count} counts, in order. */
    static final List<String> OPERATIONS = List.of("baseline", "firstExecution", "replay", "managedFirstExecution",
            "reservationBaseline", "springFirst", "springDuplicate", "camelFirst", "camelDuplicate", "springFirstInTx",
            "camelFirstInTx", "springFirstAutoCommit", "springDuplicateAutoCommit", "writeLastFirst", "writeLastReplay", "purgeBatch");

    /** The first field of a line that gives a database's product and version. */
    static final String VERSION = "#version";

    /** The columns written, in order. */
    static final String HEADER = "db\toperation\tops\tstatements\tsavepoints\tcommits\trollbacks\tsequence\ttimes\terror";

    private StatementCounts() {
    }

    /**
     * One line of the output.
     *
     * @param db the database id
     * @param operation baseline, firstExecution, replay or purgeBatch
     * @param ops how many operations were counted
     * @param statements statement executions per operation
     * @param savepoints savepoint calls per operation
     * @param commits commits per operation
     * @param rollbacks full rollbacks per operation
     * @param sequence the calls of the last operation, in order, separated by {@code " > "}
     * @param times {@code KIND=count:meanMicros} per kind of call over all operations, separated by {@code ", "}
     * @param error why the operation could not be counted, or empty
     */
    record Row(String db, String operation, int ops, double statements, double savepoints, double commits, double rollbacks,
               String sequence, String times, String error) {

        String line() {
            return String.join("\t", db, operation, Integer.toString(ops), num(statements), num(savepoints), num(commits),
                    num(rollbacks), sequence, times, error.replace('\t', ' ').replace('\n', ' '));
        }

        static Row parse(String line) {
            String[] f = line.split("\t", -1);
            return new Row(f[0], f[1], Integer.parseInt(f[2]), Double.parseDouble(f[3]), Double.parseDouble(f[4]),
                    Double.parseDouble(f[5]), Double.parseDouble(f[6]), f[7], f[8], f.length > 9 ? f[9] : "");
        }

        private static String num(double d) {
            return d == Math.rint(d) ? Long.toString((long) d) : String.format(java.util.Locale.ROOT, "%.2f", d);
        }
    }

    /** An operation to count. */
    @FunctionalInterface
    private interface Op {
        void run(Fixture f, int i) throws Exception;
    }

    /**
     * @param args {@code --db list}, {@code --ops n}, {@code --out file}
     * @throws IOException if the output cannot be written
     */
    public static void main(String[] args) throws IOException {
        String dbs = "h2mem,h2file,sqlite,postgresql,mariadb";
        int ops = 200;
        int chunk = 500;
        boolean batch = false;
        Path out = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--db" -> dbs = args[++i];
                case "--ops" -> ops = Integer.parseInt(args[++i]);
                case "--out" -> out = Path.of(args[++i]);
                case "--batch" -> batch = true;
                case "--chunk" -> chunk = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]
                        + "; use --db h2mem,h2file,sqlite,postgresql,mariadb --ops 200 --out counts.tsv [--batch --chunk 500]");
            }
        }
        List<String> lines = new ArrayList<>();
        lines.add(HEADER);
        for (String id : dbs.split(",")) {
            for (Row row : batch ? countBatch(Database.byId(id), ops, chunk, lines) : count(Database.byId(id), ops, lines)) {
                lines.add(row.line());
            }
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
     * Counts every operation on one database.
     *
     * @param database the database
     * @param ops operations per kind (after as many uncounted ones, to warm up)
     * @param meta receives a line {@code #version <tab> db <tab> product and version}
     * @return one row per operation
     */
    static List<Row> count(Database database, int ops, List<String> meta) {
        List<Row> rows = new ArrayList<>();
        CountingDataSource counter = new CountingDataSource();
        Fixture fixture = open(database, counter, OPERATIONS, rows);
        if (fixture == null) {
            return rows;
        }
        try (fixture) {
            meta.add(version(database, fixture));
            int recorded = Math.min(ops, TransactionBenchmark.RECORDED);
            rows.add(count(database, "baseline", fixture, counter, ops, 0, (f, i) -> f.baseline()));
            rows.add(count(database, "firstExecution", fixture, counter, ops, 0, (f, i) -> f.firstExecution()));
            rows.add(count(database, "replay", fixture, counter, ops, recorded,
                    (f, i) -> f.replay(Fixture.recordedKey(i % recorded))));
            rows.add(count(database, "managedFirstExecution", fixture, counter, ops, 0, (f, i) -> f.managedFirstExecution()));
            rows.add(count(database, "reservationBaseline", fixture, counter, ops, 0, (f, i) -> f.reservationBaseline()));
            rows.add(count(database, "springFirst", fixture, counter, ops, 0, (f, i) -> f.peerFirst(Peers.Peer.SPRING)));
            rows.add(count(database, "springDuplicate", fixture, counter, ops, 0,
                    (f, i) -> f.peerDuplicate(Peers.Peer.SPRING, Fixture.recordedKey(i % recorded))));
            rows.add(count(database, "camelFirst", fixture, counter, ops, 0, (f, i) -> f.peerFirst(Peers.Peer.CAMEL)));
            rows.add(count(database, "camelDuplicate", fixture, counter, ops, 0,
                    (f, i) -> f.peerDuplicate(Peers.Peer.CAMEL, Fixture.recordedKey(i % recorded))));
            rows.add(count(database, "springFirstInTx", fixture, counter, ops, 0,
                    (f, i) -> f.peerFirstInTransaction(Peers.Peer.SPRING)));
            rows.add(count(database, "camelFirstInTx", fixture, counter, ops, 0,
                    (f, i) -> f.peerFirstInTransaction(Peers.Peer.CAMEL)));
            rows.add(count(database, "springFirstAutoCommit", fixture, counter, ops, 0, (f, i) -> f.springAutoCommitFirst()));
            rows.add(count(database, "springDuplicateAutoCommit", fixture, counter, ops, 0,
                    (f, i) -> f.springAutoCommitDuplicate(Fixture.recordedKey(i % recorded))));
            rows.add(count(database, "writeLastFirst", fixture, counter, ops, 0, (f, i) -> f.writeLastFirst()));
            rows.add(count(database, "writeLastReplay", fixture, counter, ops, 0,
                    (f, i) -> f.writeLastReplay(Fixture.recordedKey(i % recorded))));
            int batch = 100;
            rows.add(count(database, "purgeBatch", fixture, counter, 5, -batch, (f, i) -> {
                if (f.purgeOnce(batch) != batch) {
                    throw new IllegalStateException("a purge removed fewer than " + batch + " rows");
                }
            }));
        }
        return rows;
    }

    /** @return the fixture, or {@code null} after adding a failed row for each of {@code operations} to {@code rows} */
    private static Fixture open(Database database, CountingDataSource counter, List<String> operations, List<Row> rows) {
        try {
            return Fixture.open(database, counter::wrap);
        } catch (RuntimeException e) {
            operations.forEach(op -> rows.add(new Row(database.id(), op, 0, 0, 0, 0, 0, "", "", message(e))));
            return null;
        }
    }

    /** The batch job's ways, as counted by {@link #countBatch}. */
    static final List<String> BATCH_OPERATIONS = List.of("batchBaseline", "batchPerItem", "batchChunk");

    /** A batch job's way of running {@code items} in chunks. */
    @FunctionalInterface
    private interface BatchOp {
        long run(Fixture f, int items, int chunk) throws Exception;
    }

    /**
     * Counts the batch job's ways on one database, per chunk: each on empty tables, after one
     * uncounted run of two chunks.
     *
     * @param database the database
     * @param chunks chunks counted per way
     * @param chunk items per chunk
     * @param meta receives the database's version line
     * @return one row per way, {@code ops} being the chunks counted
     */
    static List<Row> countBatch(Database database, int chunks, int chunk, List<String> meta) {
        List<Row> rows = new ArrayList<>();
        CountingDataSource counter = new CountingDataSource();
        Fixture fixture = open(database, counter, BATCH_OPERATIONS, rows);
        if (fixture == null) {
            return rows;
        }
        try (fixture) {
            meta.add(version(database, fixture));
            List<BatchOp> ways = List.of(Fixture::batchBaseline, Fixture::batchPerItem, Fixture::batchChunk);
            for (int w = 0; w < ways.size(); w++) {
                BatchOp way = ways.get(w);
                String name = BATCH_OPERATIONS.get(w);
                try {
                    fixture.resetTables();
                    way.run(fixture, 2 * chunk, chunk);
                    fixture.resetTables();
                    counter.reset();
                    way.run(fixture, chunks * chunk, chunk);
                    rows.add(row(database, name, counter, chunks, shortened(counter.trace(), chunks)));
                } catch (Exception e) {
                    rows.add(new Row(database.id(), name, 0, 0, 0, 0, 0, "", "", message(e)));
                }
            }
        }
        return rows;
    }

    /** @return the calls of the last of {@code ops} equal operations, at most 12 of them shown */
    private static String shortened(List<String> trace, int ops) {
        List<String> last = trace.subList(trace.size() - trace.size() / ops, trace.size());
        if (last.size() <= 12) {
            return String.join(" > ", last);
        }
        return String.join(" > ", last.subList(0, 9)) + " > ... (" + (last.size() - 12) + " more) > "
                + String.join(" > ", last.subList(last.size() - 3, last.size()));
    }

    private static String version(Database database, Fixture fixture) {
        try (java.sql.Connection c = fixture.pool.getConnection()) {
            java.sql.DatabaseMetaData md = c.getMetaData();
            return VERSION + "\t" + database.id() + "\t" + md.getDatabaseProductName() + " "
                    + md.getDatabaseProductVersion() + " (driver " + md.getDriverName() + " " + md.getDriverVersion() + ")";
        } catch (java.sql.SQLException e) {
            return VERSION + "\t" + database.id() + "\tunknown: " + e.getMessage();
        }
    }

    private static Row row(Database database, String name, CountingDataSource counter, int ops, String sequence) {
        StringJoiner times = new StringJoiner(", ");
        for (Map.Entry<String, long[]> e : counter.timeByKind().entrySet()) {
            long[] v = e.getValue();
            times.add(e.getKey() + "=" + v[0] + ":" + String.format(java.util.Locale.ROOT, "%.1f", v[1] / 1000.0 / v[0]));
        }
        double n = ops;
        return new Row(database.id(), name, ops, counter.statements() / n, counter.savepointCalls() / n,
                counter.commits() / n, counter.rollbacks() / n, sequence, times.toString(), "");
    }

    private static Row count(Database database, String name, Fixture fixture, CountingDataSource counter, int ops,
                             int prepare, Op op) {
        try {
            if (prepare > 0) {
                fixture.recordKeys(prepare);
            } else if (prepare < 0) {
                fixture.insertExpired(-prepare * ops * 2);
            }
            for (int i = 0; i < ops; i++) {
                op.run(fixture, i);
            }
            counter.reset();
            List<String> last = List.of();
            for (int i = 0; i < ops; i++) {
                int before = counter.trace().size();
                op.run(fixture, i);
                List<String> trace = counter.trace();
                last = trace.subList(before, trace.size());
            }
            return row(database, name, counter, ops, String.join(" > ", last));
        } catch (Exception e) {
            return new Row(database.id(), name, 0, 0, 0, 0, 0, "", "", message(e));
        }
    }

    private static String message(Throwable e) {
        StringBuilder m = new StringBuilder(e.toString());
        for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
            m.append(" / caused by ").append(c);
        }
        return m.toString();
    }
}
