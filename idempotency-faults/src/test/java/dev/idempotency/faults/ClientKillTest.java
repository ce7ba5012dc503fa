package dev.idempotency.faults;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * CONTRACT 7, "process killed at any point": client JVMs ({@link FaultClient#main}) run the workload
 * on a small key space shared by all of them (so that their threads wait for each other's claims and
 * replay each other's results), and are killed with SIGKILL at random moments, over and over: each
 * slot starts a child, waits until its first attempt has ended, lets it run for a random 0 to
 * {@value #MAX_LIFE_MS} ms and kills it, then starts the next. After the last kill, every key is
 * retried and the histories are checked ({@link FaultRun#check}).
 *
 * <p>Every build: {@value #KILLS} kills per database (a child JVM costs about half a second of
 * CPU to start, which bounds what fits in the build's time); PostgreSQL and MariaDB run four JVMs of eight
 * threads at once, SQLite two of four (one writer at a time: more only queue), H2 one JVM of one
 * thread (an H2 file is opened by one process at a time; see {@link #h2File}). Deep setting ({@code -Didempotency.faults.deep=true}):
 * {@value #DEEP_KILLS} kills per database; {@code -Didempotency.faults.kills=N} sets any number, and
 * {@code -Didempotency.faults.minutes=M} ends the killing after M minutes if the number is not reached
 * by then (the check runs either way, on what was done).
 */
class ClientKillTest {

    static final int KILLS = 50;
    static final int DEEP_KILLS = 1_000;
    static final int MAX_LIFE_MS = 400;
    /** Keys shared by every client of a run: few enough that threads meet on them, enough that kills still land in first executions late in the run. */
    static final int KEYS = 1_000;

    @Test
    void postgres(@TempDir Path dir) throws Exception {
        kill(FaultDatabase.postgres(), dir, 4, 8, KEYS);
    }

    @Test
    void mariadb(@TempDir Path dir) throws Exception {
        kill(FaultDatabase.mariadb(), dir, 4, 8, KEYS);
    }

    @Test
    void h2File(@TempDir Path dir) throws Exception {
        // One thread: with several, H2 lets a thread see (and replay) a commit that another thread's commit() has not yet
        // written to the file, so a kill at that moment loses a result already answered (docs/reliability.md).
        kill(FaultDatabase.h2File(dir), dir, 1, 1, KEYS);
    }

    @Test
    void sqliteFile(@TempDir Path dir) throws Exception {
        kill(FaultDatabase.sqliteFile(dir), dir, 2, 4, KEYS);
    }

    private static void kill(FaultDatabase db, Path dir, int jvms, int threads, int keys) throws Exception {
        int target = Integer.getInteger("idempotency.faults.kills", FaultRun.DEEP ? DEEP_KILLS : KILLS);
        Long minutes = Long.getLong("idempotency.faults.minutes");
        FaultRun run = new FaultRun(db, dir);
        try (HikariDataSource setup = db.pool(2)) {
            Workload.createTables(setup, run.store);
        }
        long started = System.nanoTime();
        long limit = minutes == null ? Long.MAX_VALUE : minutes * 60_000_000_000L;
        AtomicInteger kills = new AtomicInteger();
        AtomicInteger children = new AtomicInteger();
        List<Thread> slots = new ArrayList<>();
        List<Throwable> failures = new ArrayList<>();
        for (int s = 0; s < jvms; s++) {
            Thread slot = new Thread(() -> {
                try {
                    while (kills.get() < target && System.nanoTime() - started < limit) {
                        killOne(run, "c" + children.incrementAndGet(), keys, threads);
                        kills.incrementAndGet();
                    }
                } catch (Throwable t) {
                    synchronized (failures) {
                        failures.add(t);
                    }
                }
            }, "kill-slot-" + s);
            slot.start();
            slots.add(slot);
        }
        for (Thread slot : slots) {
            slot.join();
        }
        assertThat(failures).as("failures of the kill loop").isEmpty();
        double seconds = (System.nanoTime() - started) / 1e9;
        try (HikariDataSource ds = db.pool(4)) {
            run.check(ds, FaultRun.INFRASTRUCTURE_FAILURES, String.format("%d SIGKILLs of %d client JVMs (%d at a time x %d threads, %d keys)"
                    + " in %.1f s", kills.get(), children.get(), jvms, threads, keys, seconds));
        }
    }

    /** Starts a child, waits until it works, lets it run a random while, kills it (SIGKILL) and waits for its end. */
    private static void killOne(FaultRun run, String name, int keys, int threads) throws IOException, InterruptedException {
        FaultDatabase db = run.db;
        Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx128m",
                "-Xshare:auto", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                FaultClient.class.getName(), db.url(), db.user() == null ? "-" : db.user(), db.password() == null ? "-" : db.password(),
                name, run.dir.resolve(name + ".history").toString(), run.scope, Integer.toString(keys), Integer.toString(threads))
                .redirectErrorStream(true).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null && !line.equals("ready")) {
                // start-up noise
            }
            if (line == null) {
                throw new AssertionError("child " + name + " ended before it was ready, exit " + child.waitFor());
            }
            Thread drain = new Thread(() -> {
                try {
                    while (out.readLine() != null) {
                        // keep the pipe flowing until the kill
                    }
                } catch (IOException killed) {
                    // the stream ends with the process
                }
            });
            drain.setDaemon(true);
            drain.start();
            Thread.sleep(ThreadLocalRandom.current().nextInt(MAX_LIFE_MS + 1));
            child.destroyForcibly(); // SIGKILL on Linux
            if (!child.waitFor(30, TimeUnit.SECONDS)) {
                throw new AssertionError("child " + name + " survived SIGKILL");
            }
        } finally {
            child.destroyForcibly();
        }
    }
}
