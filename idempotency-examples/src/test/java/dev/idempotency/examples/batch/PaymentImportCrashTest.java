package dev.idempotency.examples.batch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.testsupport.ChildJvm;
import dev.idempotency.testsupport.DatabaseServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills the example job with {@code SIGKILL} ({@link Process#destroyForcibly()}) at random moments,
 * in a child JVM on this test's class path, then runs it to completion. Every other kill comes at
 * a random moment up to 1.5 s after the job began (in its start, its replay of what earlier runs
 * committed, or its new chunks); the others up to 1 s after the run committed its first chunk of
 * new work, so that the job always moves on between kills. Then the ledger holds exactly one
 * row per valid instruction, every key is recorded, and a final rerun executes nothing. After every
 * kill, what the killed job left is checked too: no instruction booked twice, no claim left in
 * progress, and the ledger's rows and the completed records are the same instructions (a chunk
 * commits both or neither).
 *
 * <p>On an H2 file in every build, and on PostgreSQL when {@code IDEMPOTENCY_PG_URL} is set (under
 * {@code CI=true} a missing server fails; elsewhere the test is skipped). Settings, as system
 * properties: {@code idempotency.batch.kills} (4), {@code idempotency.batch.instructions}
 * (10,000), {@code idempotency.batch.seed} (random, printed).
 */
class PaymentImportCrashTest {

    private static final int KILLS = Integer.getInteger("idempotency.batch.kills", 4);
    private static final int INSTRUCTIONS = Integer.getInteger("idempotency.batch.instructions", 10_000);
    private static final int CHUNK = 100;
    /** The longest a kill waits after the job began. */
    private static final int MAX_DELAY_MILLIS = 1_500;
    /** The longest a kill waits after the run's first chunk of new work. */
    private static final int MAX_DELAY_AFTER_WORK_MILLIS = 1_000;
    private static final Pattern START = Pattern.compile("Importing ");
    private static final Pattern EXECUTED = Pattern.compile("executed ([1-9][0-9,]*)");

    @Test
    void killedAtRandomOnAnH2FileAndRunAgainBooksEachInstructionOnce(@TempDir Path dir) throws Exception {
        String url = "jdbc:h2:file:" + dir.resolve("ledger");
        crashAndRecover("h2file", dir, List.of(), () -> DriverManager.getConnection(url));
    }

    @Test
    void killedAtRandomOnPostgresqlAndRunAgainBooksEachInstructionOnce(@TempDir Path dir) throws Exception {
        DatabaseServer postgres = DatabaseServer.postgres();
        crashAndRecover("postgresql", dir, List.of("--postgres"),
                () -> DriverManager.getConnection(postgres.url(), postgres.user(), postgres.password()));
    }

    /** Opens a connection to the job's database from this JVM. */
    @FunctionalInterface
    interface Connect {
        Connection open() throws SQLException;
    }

    /** What a killed or finished run left in the database. */
    record State(long ledgerRows, long completed, long failed, long inProgress, long bookedTwice, long rowsWithoutRecord) {
    }

    private void crashAndRecover(String db, Path dir, List<String> extra, Connect connect) throws Exception {
        long seed = Long.getLong("idempotency.batch.seed", new Random().nextLong());
        Random random = new Random(seed);
        int valid = INSTRUCTIONS - InstructionFile.invalidIn(INSTRUCTIONS);
        InstructionFile.ensure(dir, INSTRUCTIONS); // written once here, so that no kill lands while it is written
        long started = System.nanoTime();
        List<Long> rowsAfterKill = new ArrayList<>();
        int kills = 0;
        int finishedBeforeTheKill = 0;
        // A run that finishes the whole job leaves nothing for the next kill to land in: the run after it
        // starts the job afresh (empty tables), so that every round can be killed in the middle of work.
        boolean fresh = true;
        for (int round = 0; kills < KILLS; round++) {
            assertThat(round).as("rounds to deliver %d kills (seed %d)", KILLS, seed).isLessThan(KILLS * 3);
            Path log = dir.resolve("run-" + round + ".log");
            Process job = start(dir, extra, fresh, log);
            fresh = false;
            boolean afterWork = round % 2 == 1;
            long delay = random.nextInt((afterWork ? MAX_DELAY_AFTER_WORK_MILLIS : MAX_DELAY_MILLIS) + 1);
            if (!waitFor(job, log, afterWork ? EXECUTED : START)) {
                finishedBeforeTheKill++;
                assertThat(job.exitValue()).as("exit of run %d: %s", round, Files.readString(log)).isZero();
                fresh = true;
                continue;
            }
            if (job.waitFor(delay, TimeUnit.MILLISECONDS)) {
                finishedBeforeTheKill++;
                assertThat(job.exitValue()).as("exit of run %d: %s", round, Files.readString(log)).isZero();
                fresh = true;
                continue;
            }
            job.destroyForcibly(); // SIGKILL: no shutdown hook, no rollback from the client, no flush
            assertThat(job.waitFor(60, TimeUnit.SECONDS)).as("the killed job ended").isTrue();
            kills++;
            State after = state(connect);
            rowsAfterKill.add(after.ledgerRows());
            assertThat(after.bookedTwice()).as("instructions booked twice after kill %d (seed %d)", kills, seed).isZero();
            assertThat(after.inProgress()).as("claims left in progress after kill %d", kills).isZero();
            assertThat(after.rowsWithoutRecord()).as("ledger rows without their completed record after kill %d", kills).isZero();
            assertThat(after.completed()).as("completed records against ledger rows after kill %d", kills).isEqualTo(after.ledgerRows());
        }

        Path last = dir.resolve("complete.log");
        Process complete = start(dir, extra, false, last);
        assertThat(complete.waitFor(10, TimeUnit.MINUTES)).as("the last run finished").isTrue();
        assertThat(complete.exitValue()).as("exit of the last run: %s", Files.readString(last)).isZero();
        State end = state(connect);
        assertThat(end.ledgerRows()).as("one ledger row per valid instruction").isEqualTo(valid);
        assertThat(end.bookedTwice()).isZero();
        assertThat(end.rowsWithoutRecord()).isZero();
        assertThat(end.completed()).as("completed keys").isEqualTo(valid);
        assertThat(end.failed()).as("recorded rejections").isEqualTo(INSTRUCTIONS - valid);
        assertThat(end.inProgress()).isZero();

        Path again = dir.resolve("rerun.log");
        Process rerun = start(dir, extra, false, again);
        assertThat(rerun.waitFor(10, TimeUnit.MINUTES)).isTrue();
        assertThat(rerun.exitValue()).isZero();
        assertThat(Files.readString(again)).contains("Nothing executed: all " + String.format(java.util.Locale.ROOT, "%,d", INSTRUCTIONS));
        assertThat(state(connect)).isEqualTo(end);

        System.out.printf(java.util.Locale.ROOT, "%s: %d instructions, %d kills (%d runs finished before their kill), ledger rows"
                + " after each kill %s, then %d rows once complete; %.1f s; seed %d%n", db, INSTRUCTIONS, kills, finishedBeforeTheKill,
                rowsAfterKill, end.ledgerRows(), (System.nanoTime() - started) / 1e9, seed);
    }

    /** Starts the job in a child JVM with this test's class path, its output going to {@code log}. */
    private static Process start(Path dir, List<String> extra, boolean fresh, Path log) throws IOException {
        List<String> args = new ArrayList<>(List.of("--instructions", Integer.toString(INSTRUCTIONS), "--chunk", Integer.toString(CHUNK),
                "--dir", dir.toString(), "--progress-every", "1"));
        args.addAll(extra);
        if (fresh) {
            args.add("--fresh");
        }
        return new ProcessBuilder(ChildJvm.command(256, PaymentImportJob.class, args)).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
    }

    /** @return {@code true} once the job's output matches; {@code false} if it ended first */
    private static boolean waitFor(Process job, Path log, Pattern output) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (System.nanoTime() < deadline) {
            if (Files.exists(log) && output.matcher(Files.readString(log, StandardCharsets.UTF_8)).find()) {
                return true;
            }
            if (job.waitFor(20, TimeUnit.MILLISECONDS)) {
                return false;
            }
        }
        job.destroyForcibly();
        throw new AssertionError("the job's output did not match " + output + " within 2 minutes: " + Files.readString(log));
    }

    private static State state(Connect connect) throws SQLException {
        String records = PaymentImportJob.KEY_TABLE;
        try (Connection c = connect.open(); Statement s = c.createStatement()) {
            return new State(
                    count(s, "SELECT COUNT(*) FROM " + Ledger.TABLE),
                    count(s, "SELECT COUNT(*) FROM " + records + " WHERE status = 'COMPLETED'"),
                    count(s, "SELECT COUNT(*) FROM " + records + " WHERE status = 'FAILED'"),
                    count(s, "SELECT COUNT(*) FROM " + records + " WHERE status = 'IN_PROGRESS'"),
                    count(s, "SELECT COUNT(*) FROM (SELECT instruction_id FROM " + Ledger.TABLE
                            + " GROUP BY instruction_id HAVING COUNT(*) > 1) twice"),
                    count(s, "SELECT COUNT(*) FROM " + Ledger.TABLE + " l WHERE NOT EXISTS (SELECT 1 FROM " + records
                            + " r WHERE r.scope = '" + PaymentInstruction.SCOPE + "' AND r.key_id = l.instruction_id"
                            + " AND r.status = 'COMPLETED')"));
        }
    }

    private static long count(Statement s, String sql) throws SQLException {
        try (ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
