package dev.idempotency.faults;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.testsupport.ChildJvm;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

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
    /** How long a child may take to be ready: far more than it ever needs, so that only a hung child fails. */
    private static final int READY_SECONDS = 300;

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
     * client of the same workload and the check ({@link FaultRun#check}). Lease mode runs as on any
     * other store ({@link #killAndCheck(LeaseStore, Path, int, int, int, Duration, int)}).
     *
     * @param lease the lease of lease mode (and of the chunks' engine); the last pass waits out the killed holders' leases
     * @param everyBuild the kills of the every-build setting
     * @return the report
     */
    static HistoryChecker.Report killAndCheck(FaultDatabase db, Path dir, FaultClient.Mode mode, int jvms, int threads, int keys,
                                              Duration lease, int everyBuild) throws Exception {
        if (mode == FaultClient.Mode.LEASE) {
            return killAndCheck(new JdbcLeaseStore(db), dir, jvms, threads, keys, lease, everyBuild);
        }
        FaultRun run = new FaultRun(db, dir);
        try (HikariDataSource setup = db.pool(2)) {
            Workload.createTables(setup, run.store);
        } // closed before the children start: an H2 file is opened by one process at a time
        Result killed = kill(run, mode, db.address(), jvms, threads, keys, lease, everyBuild);
        try (HikariDataSource ds = db.pool(4)) {
            return run.check(FaultRun.INFRASTRUCTURE_FAILURES, mode + ": " + killed.describe(jvms, threads, keys),
                    FaultClient.factory(mode, ds, run.scope, lease), () -> Workload.read(ds, run.store, run.scope));
        }
    }

    /**
     * A whole lease-mode client-kill run on one store of any kind: the tables (if the store has any),
     * the kill loop, then the last pass and the check, with the external service's effects.
     *
     * @param lease the lease; the last pass waits out the killed holders' leases
     * @param everyBuild the kills of the every-build setting
     * @return the report
     */
    static HistoryChecker.Report killAndCheck(LeaseStore store, Path dir, int jvms, int threads, int keys, Duration lease,
                                              int everyBuild) throws Exception {
        FaultRun run = new FaultRun(store.name(), dir);
        try (LeaseStore.Opened setup = store.open(2)) {
            setup.createTables();
        } // closed before the children start: an H2 file is opened by one process at a time
        Result killed = kill(run, FaultClient.Mode.LEASE, store.address(), jvms, threads, keys, lease, everyBuild);
        try (LeaseStore.Opened opened = store.open(4)) {
            return run.check(FaultRun.INFRASTRUCTURE_FAILURES, FaultClient.Mode.LEASE + ": " + killed.describe(jvms, threads, keys),
                    opened.clients(run.scope, dir, lease), () -> opened.read(run.scope, LeaseWorkload.effects(dir)));
        }
    }

    /**
     * Runs the kill loop.
     *
     * @param address how the children reach the store ({@link LeaseStore#address()})
     * @param everyBuild the kills of the every-build setting
     * @return what was done
     */
    static Result kill(FaultRun run, FaultClient.Mode mode, List<String> address, int jvms, int threads, int keys, Duration lease,
                       int everyBuild) throws InterruptedException {
        int target = Integer.getInteger("idempotency.faults.kills", FaultRun.DEEP ? DEEP_KILLS : everyBuild);
        Long minutes = Long.getLong("idempotency.faults.minutes");
        long limit = minutes == null ? Long.MAX_VALUE : minutes * 60_000_000_000L;
        ChildJvm.Killed killed = ChildJvm.loop(jvms, target, limit, "c", name -> killOne(run, mode, address, name, keys, threads, lease));
        return new Result(killed.kills(), killed.children(), killed.seconds());
    }

    /** Starts a child, waits until it works, lets it run a random while, kills it (SIGKILL) and waits for its end. */
    private static void killOne(FaultRun run, FaultClient.Mode mode, List<String> address, String name, int keys, int threads,
                                Duration lease) throws IOException, InterruptedException {
        try (ChildJvm child = ChildJvm.startReady(name, READY_SECONDS, FaultClient.class, List.of(mode.name(),
                address.get(0), address.get(1), address.get(2), name, run.dir.resolve(name + ".history").toString(), run.scope,
                Integer.toString(keys), Integer.toString(threads), run.dir.toString(), Long.toString(lease.toMillis())))) {
            Thread.sleep(ThreadLocalRandom.current().nextInt(MAX_LIFE_MS + 1));
            child.kill();
        }
    }
}
