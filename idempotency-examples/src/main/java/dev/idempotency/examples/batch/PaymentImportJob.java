package dev.idempotency.examples.batch;

import dev.idempotency.IdempotentCall;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.BatchJob;
import dev.idempotency.Idempotency;
import dev.idempotency.JobProgress;
import dev.idempotency.JobResult;
import dev.idempotency.KeyPolicy;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.ResultCodec;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.jdbc.JdbcTransactions;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.Stream;
import javax.sql.DataSource;

/**
 * The batch job example: imports payment instructions from a CSV file (generated, always the same,
 * if it is missing) into a ledger, in chunks of one transaction each, with a progress bar. Each
 * instruction's id is its idempotency key, so the job can be killed at any moment and run again:
 * committed chunks are replayed, not booked twice, and a finished job run again executes nothing.
 * The generated file holds deliberately invalid instructions, a zero amount at every 1,000th
 * ({@code PI-00000999}, {@code PI-00001999}, ...): the ledger rejects them, the job records each
 * rejection as a final failure for that instruction and goes on, and a rerun replays the failure
 * without booking. So "100 failed" for 100,000 instructions is the expected output, and the summary
 * names the failed instructions (and any held or mismatched ones) by id.
 *
 * <pre>
 * mvn -q -pl idempotency-examples -am compile exec:java -Dexec.mainClass=dev.idempotency.examples.batch.PaymentImportJob
 * </pre>
 *
 * <p>Options: {@code --instructions N} (100,000), {@code --chunk N} (500), {@code --dir folder}
 * for the file and the H2 database ({@code target/payment-import}), {@code --postgres} for the
 * PostgreSQL server named by {@code IDEMPOTENCY_PG_URL}, {@code _USER} and {@code _PASSWORD}
 * instead of H2, {@code --fresh} to drop the ledger and the job's keys first, {@code --progress-every N}
 * for a progress line every N chunks (20) when the output is not a terminal.
 */
public final class PaymentImportJob {

    /** The job's idempotency table. */
    public static final String KEY_TABLE = "payment_idempotency_record";

    /** Items of each kind the summary prints before "and N more". */
    static final int PRINTED_ITEMS = 10;

    private PaymentImportJob() {
    }

    /**
     * What to run.
     *
     * @param instructions how many instructions the file holds
     * @param chunk items per transaction
     * @param dir the folder of the file and of the H2 database
     * @param postgres whether to book into PostgreSQL instead of H2
     * @param fresh whether to drop the ledger and the keys first
     * @param progressEvery off a terminal, a progress line every this many chunks
     */
    public record Options(int instructions, int chunk, Path dir, boolean postgres, boolean fresh, int progressEvery) {

        /**
         * @param args the command line
         * @return the options
         * @throws IllegalArgumentException naming an unknown argument
         */
        public static Options parse(String... args) {
            int instructions = 100_000;
            int chunk = BatchJob.DEFAULT_CHUNK_SIZE;
            Path dir = Path.of("target", "payment-import");
            boolean postgres = false;
            boolean fresh = false;
            int progressEvery = 20;
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--instructions" -> instructions = Integer.parseInt(args[++i]);
                    case "--chunk" -> chunk = Integer.parseInt(args[++i]);
                    case "--dir" -> dir = Path.of(args[++i]);
                    case "--postgres" -> postgres = true;
                    case "--fresh" -> fresh = true;
                    case "--progress-every" -> progressEvery = Integer.parseInt(args[++i]);
                    default -> throw new IllegalArgumentException("unknown argument '" + args[i]
                            + "'; use --instructions N, --chunk N, --dir folder, --postgres, --fresh, --progress-every N");
                }
            }
            return new Options(instructions, chunk, dir.toAbsolutePath(), postgres, fresh, progressEvery);
        }
    }

    /**
     * @param args see the class comment
     * @throws Exception if the file or the database fails
     */
    public static void main(String[] args) throws Exception {
        run(Options.parse(args), System.out, System.console() != null);
    }

    /**
     * Runs the import once.
     *
     * @param options what to run
     * @param out where the progress and the summary go
     * @param inPlace whether to redraw the progress line in place (a terminal)
     * @return the job's final progress and its failed, held and mismatched instructions
     * @throws IOException if the file cannot be written or read
     * @throws SQLException if the database fails
     */
    public static JobResult<Long> run(Options options, PrintStream out, boolean inPlace) throws IOException, SQLException {
        Path file = InstructionFile.ensure(options.dir(), options.instructions());
        long total = InstructionFile.count(file);
        try (HikariDataSource dataSource = dataSource(options)) {
            JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().table(KEY_TABLE).build();
            if (options.fresh()) {
                dropTables(dataSource);
            }
            Ledger.createTableIfMissing(dataSource);
            store.createTableIfMissing(dataSource);
            out.printf(Locale.ROOT, "Importing %,d payment instructions from %s into %s, chunks of %d%n", total,
                    file.getFileName(), dataSource.getJdbcUrl(), options.chunk());

            // tag::batch-job[]
            Idempotency<Connection> engine = Idempotency.builder(store)
                    .keyPolicy(KeyPolicy.builder().retention(Duration.ofDays(7)) // a rerun next week still replays
                            .finalFailures(Ledger.InvalidInstruction.class).build())
                    .build();
            ManagedIdempotency<Connection> managed = ManagedIdempotency.of(engine, JdbcTransactions.of(dataSource));
            Consumer<JobProgress> progress = new ProgressBar(out, inPlace, options.progressEvery()); // or p -> log.info("{}", p)
            BatchJob<Connection, PaymentInstruction, Long, SQLException> job = BatchJob.builder(managed,
                            (PaymentInstruction instruction) -> IdempotentCall.of(instruction.key(), ResultCodec.longs())
                                    .withFingerprint(instruction.fingerprint()),
                            Ledger::book) // a ChunkWork: (tx, instruction) -> entry id
                    .chunkSize(options.chunk())
                    .listener(progress) // told the counts after every committed chunk
                    .build();
            JobResult<Long> result;
            try (Stream<PaymentInstruction> instructions = InstructionFile.read(file)) {
                result = job.process(instructions, total);
            }
            JobProgress done = result.progress(); // the counts, whole
            List<Outcome.Failed<Long>> failed = result.failedItems(); // by key: the first 1,000, then only counted
            // end::batch-job[]

            long rows = count(dataSource, "SELECT COUNT(*) FROM " + Ledger.TABLE);
            if (done.nothingExecuted() && done.held() == 0) {
                out.printf(Locale.ROOT, "Nothing executed: all %,d instructions were recorded by an earlier run"
                        + " (%,d replayed, %,d failed, %,d mismatched); ledger rows: %,d%n", done.done(), done.replayed(), done.failed(),
                        done.mismatched(), rows);
            } else {
                out.printf(Locale.ROOT, "Done: %,d executed, %,d replayed, %,d failed, %,d held, %,d mismatched in %.1f s"
                        + " (%,.0f items/s); ledger rows: %,d%n", done.executed(), done.replayed(), done.failed(), done.held(),
                        done.mismatched(), done.elapsed().toMillis() / 1000.0, done.itemsPerSecond(), rows);
            }
            print(out, "Failed", done.failed(), failed, f -> f.key().id() + ": " + f.errorMessage(), String.format(Locale.ROOT,
                    "refused by the ledger and recorded as final failures (expected: the generated file holds %,d deliberately"
                    + " invalid ones, a zero amount at every %,dth)", InstructionFile.invalidIn((int) total),
                    InstructionFile.INVALID_EVERY));
            print(out, "Held", done.held(), result.heldItems(), h -> h.key().id(),
                    "in progress in another run past the lock timeout; nothing recorded, the next run books them");
            print(out, "Mismatched", done.mismatched(), result.mismatchedItems(), m -> m.key().id(),
                    "changed in the file since they were booked; refused, not booked again");
            return result;
        }
    }

    /** Prints a count of instructions, what they mean, and the first few of them. */
    private static <O extends Outcome<Long>> void print(PrintStream out, String title, long count, List<O> listed,
                                                        Function<O, String> describe, String meaning) {
        if (count == 0) {
            return;
        }
        out.printf(Locale.ROOT, "%s: %,d instruction%s, %s:%n", title, count, count == 1 ? "" : "s", meaning);
        listed.stream().limit(PRINTED_ITEMS).forEach(outcome -> out.println("  " + describe.apply(outcome)));
        if (count > Math.min(listed.size(), PRINTED_ITEMS)) {
            out.printf(Locale.ROOT, "  and %,d more%n", count - Math.min(listed.size(), PRINTED_ITEMS));
        }
    }

    /**
     * @param options what to run
     * @return a small pool on H2 (a file in the folder) or on the PostgreSQL server of the environment
     */
    static HikariDataSource dataSource(Options options) {
        HikariConfig config = new HikariConfig();
        config.setPoolName("payment-import");
        config.setMaximumPoolSize(2);
        if (options.postgres()) {
            String url = System.getenv("IDEMPOTENCY_PG_URL");
            if (url == null || url.isBlank()) {
                throw new IllegalStateException("--postgres needs IDEMPOTENCY_PG_URL, IDEMPOTENCY_PG_USER and IDEMPOTENCY_PG_PASSWORD");
            }
            config.setJdbcUrl(url);
            config.setUsername(System.getenv("IDEMPOTENCY_PG_USER"));
            config.setPassword(System.getenv("IDEMPOTENCY_PG_PASSWORD"));
        } else {
            // WRITE_DELAY=0: by default H2 acknowledges a commit and writes it to the file up to half a
            // second later, so a killed process loses work that the job had already reported as done
            // (the progress bar counted it). With 0, a commit is written to the file before it returns.
            config.setJdbcUrl("jdbc:h2:file:" + options.dir().resolve("ledger") + ";WRITE_DELAY=0");
        }
        return new HikariDataSource(config);
    }

    private static void dropTables(DataSource dataSource) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + Ledger.TABLE);
            s.execute("DROP TABLE IF EXISTS " + KEY_TABLE);
            if (!c.getAutoCommit()) {
                c.commit();
            }
        }
    }

    private static long count(DataSource dataSource, String sql) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
