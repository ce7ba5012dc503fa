package dev.idempotency.faults;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client-kill run of one workload of the engine that runs its own transactions
 * ({@link LeaseKillTest}, {@link ChunkKillTest}), on each database: child JVMs killed with SIGKILL at
 * random moments ({@link KilledChildren}), then the last pass and the check.
 *
 * <p>Every build: {@value #KILLS} kills on PostgreSQL (two JVMs of four threads at once) and on an H2
 * file (one JVM of one thread; an H2 file is opened by one process at a time). The deep setting adds
 * MariaDB (two JVMs of four threads) and an SQLite file (one of two).
 */
abstract class WorkloadKillTest {

    static final int KILLS = 8;
    static final int KEYS = 1_000;
    /** Short, so that the attempt after a kill takes the key over soon; long enough for an attempt on a loaded machine. */
    static final Duration LEASE = Duration.ofSeconds(1);

    private final FaultClient.Mode mode;

    WorkloadKillTest(FaultClient.Mode mode) {
        this.mode = mode;
    }

    @Test
    void postgres(@TempDir Path dir) throws Exception {
        kill(FaultDatabase.postgres(), dir, 2, 4);
    }

    @Test
    void mariadb(@TempDir Path dir) throws Exception {
        deepOnly();
        kill(FaultDatabase.mariadb(), dir, 2, 4);
    }

    @Test
    void h2File(@TempDir Path dir) throws Exception {
        kill(FaultDatabase.h2File(dir), dir, 1, 1);
    }

    @Test
    void sqliteFile(@TempDir Path dir) throws Exception {
        deepOnly();
        kill(FaultDatabase.sqliteFile(dir), dir, 1, 2);
    }

    private void kill(FaultDatabase db, Path dir, int jvms, int threads) throws Exception {
        KilledChildren.killAndCheck(db, dir, mode, jvms, threads, KEYS, LEASE, KILLS);
    }

    /** The every-build time goes to PostgreSQL and H2; the other databases run these workloads in the deep setting. */
    private static void deepOnly() {
        Assumptions.assumeTrue(FaultRun.DEEP, "run in the deep setting only (-Didempotency.faults.deep=true)");
    }
}
