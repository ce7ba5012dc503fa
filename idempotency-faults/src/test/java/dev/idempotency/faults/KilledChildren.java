package dev.idempotency.faults;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The kill loop of the client-kill tests: child JVMs ({@link FaultClient#main}) run a workload on a
 * key space shared by all of them, and are killed with SIGKILL at random moments, over and over:
 * each of {@code jvms} slots starts a child, waits until its first attempt has ended, lets it run for
 * a random 0 to {@value #MAX_LIFE_MS} ms, kills it, waits for its end, and starts the next, until the
 * number of kills is reached.
 *
 * <p>The number of kills is the test's every-build figure, {@value #DEEP_KILLS} in the deep setting
 * ({@code -Didempotency.faults.deep=true}), or any number given with
 * {@code -Didempotency.faults.kills=N}; {@code -Didempotency.faults.minutes=M} ends the killing after
 * M minutes if the number is not reached by then (the check runs either way, on what was done).
 */
final class KilledChildren {

    static final int DEEP_KILLS = 1_000;
    static final int MAX_LIFE_MS = 400;

    /**
     * @param kills the SIGKILLs made
     * @param children the child JVMs started
     * @param seconds how long the killing took
     */
    record Result(int kills, int children, double seconds) {

        /** @return the faults injected, for the figures */
        String describe(int jvms, int threads, int keys) {
            return String.format("%d SIGKILLs of %d client JVMs (%d at a time x %d threads, %d keys) in %.1f s", kills, children, jvms,
                    threads, keys, seconds);
        }
    }

    private KilledChildren() {
    }

    /**
     * A whole client-kill run on one database: the tables, the kill loop, then the last pass with a
     * client of the same workload and the check ({@link FaultRun#check}).
     *
     * @param lease the lease of lease mode (and of the chunks' engine); the last pass waits out the killed holders' leases
     * @param everyBuild the kills of the every-build setting
     * @return the report
     */
    static HistoryChecker.Report killAndCheck(FaultDatabase db, Path dir, FaultClient.Mode mode, int jvms, int threads, int keys,
                                              Duration lease, int everyBuild) throws Exception {
        FaultRun run = new FaultRun(db, dir);
        try (HikariDataSource setup = db.pool(2)) {
            if (mode == FaultClient.Mode.LEASE) {
                LeaseWorkload.createTables(setup, run.store);
            } else {
                Workload.createTables(setup, run.store);
            }
        } // closed before the children start: an H2 file is opened by one process at a time
        Result killed = kill(run, mode, jvms, threads, keys, lease, everyBuild);
        try (HikariDataSource ds = db.pool(4)) {
            FaultRun.State state = mode == FaultClient.Mode.LEASE
                    ? () -> LeaseWorkload.read(ds, run.store, run.scope, LeaseWorkload.effects(dir))
                    : () -> Workload.read(ds, run.store, run.scope);
            return run.check(FaultRun.INFRASTRUCTURE_FAILURES, mode + ": " + killed.describe(jvms, threads, keys),
                    FaultClient.factory(mode, ds, run.scope, dir, lease), state);
        }
    }

    /**
     * Runs the kill loop.
     *
     * @param everyBuild the kills of the every-build setting
     * @return what was done
     */
    static Result kill(FaultRun run, FaultClient.Mode mode, int jvms, int threads, int keys, Duration lease, int everyBuild)
            throws InterruptedException {
        int target = Integer.getInteger("idempotency.faults.kills", FaultRun.DEEP ? DEEP_KILLS : everyBuild);
        Long minutes = Long.getLong("idempotency.faults.minutes");
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
                        killOne(run, mode, "c" + children.incrementAndGet(), keys, threads, lease);
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
        return new Result(kills.get(), children.get(), (System.nanoTime() - started) / 1e9);
    }

    /** Starts a child, waits until it works, lets it run a random while, kills it (SIGKILL) and waits for its end. */
    private static void killOne(FaultRun run, FaultClient.Mode mode, String name, int keys, int threads, Duration lease)
            throws IOException, InterruptedException {
        FaultDatabase db = run.db;
        Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx128m",
                "-Xshare:auto", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", FaultClient.class.getName(), mode.name(),
                db.url(), db.user() == null ? "-" : db.user(), db.password() == null ? "-" : db.password(),
                name, run.dir.resolve(name + ".history").toString(), run.scope, Integer.toString(keys), Integer.toString(threads),
                run.dir.toString(), Long.toString(lease.toMillis()))
                .redirectErrorStream(true).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            List<String> noise = new ArrayList<>();
            while ((line = out.readLine()) != null && !line.equals("ready")) {
                if (noise.size() < 40) {
                    noise.add(line);
                }
            }
            if (line == null) {
                throw new AssertionError("child " + name + " ended before it was ready, exit " + child.waitFor() + ":\n"
                        + String.join("\n", noise));
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
