package dev.idempotency.faults;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Contract 7 (docs/contract.md), "process killed at any point": client JVMs
 * ({@link FaultClient#main}) run the workload on a small key space shared by all of them (so that
 * their threads wait for each other's claims and replay each other's results), and are killed with
 * SIGKILL at random moments, over and over: each slot starts a child, waits until its first attempt
 * has ended, lets it run for a random while and kills it, then starts the next
 * ({@link KilledChildren}). After the last kill, every key is retried and the histories are checked
 * ({@link FaultRun#check}).
 *
 * <p>Every build: {@value #KILLS} kills per database (a child JVM costs about half a second of
 * CPU to start, which bounds what fits in the build's time); PostgreSQL and MariaDB run four JVMs of eight
 * threads at once, SQLite two of four (one writer at a time: more only queue), H2 one JVM of one
 * thread (an H2 file is opened by one process at a time; see {@link #h2File}). Deep setting: see
 * {@link KilledChildren}.
 */
class ClientKillTest {

    static final int KILLS = 12;
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
        KilledChildren.killAndCheck(db, dir, FaultClient.Mode.TRANSACTIONAL, jvms, threads, keys, Duration.ZERO, KILLS);
    }
}
