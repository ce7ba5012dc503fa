package dev.idempotency.faults;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.testsupport.TestEnvironment;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * Contract 7 (docs/contract.md): the disk of an embedded database fills up, or turns read-only,
 * under the clients. The database lives on a small {@code tmpfs} mounted for the test (8 MiB); the
 * disk is filled with a file of zeros, or remounted read-only. Every attempt then must fail with an
 * exception that says why (no space, read-only), and never be answered as done; once the disk is
 * back, the database opens again, every operation acknowledged before is there, nothing is
 * half-written, and the retries of the failed attempts run the work once.
 *
 * <p>Mounting needs root (or {@code CAP_SYS_ADMIN}); without it the test is skipped (under CI it
 * fails).
 */
class EmbeddedDiskTest {

    enum Disk { FULL, READ_ONLY }

    static Stream<Arguments> cases() {
        Function<Path, FaultDatabase> h2 = FaultDatabase::h2File;
        Function<Path, FaultDatabase> sqlite = FaultDatabase::sqliteFile;
        return Stream.of(Arguments.of("H2 file", h2, Disk.FULL), Arguments.of("H2 file", h2, Disk.READ_ONLY),
                Arguments.of("SQLite file", sqlite, Disk.FULL), Arguments.of("SQLite file", sqlite, Disk.READ_ONLY));
    }

    @ParameterizedTest(name = "{0}, disk {2}")
    @MethodSource("cases")
    void aFullOrReadOnlyDiskGivesAClearErrorAndLeavesNothingHalfWritten(String name, Function<Path, FaultDatabase> database, Disk disk,
            @TempDir Path dir) throws Exception {
        Path mnt = Files.createDirectories(dir.resolve("disk"));
        mount(mnt);
        try {
            FaultDatabase db = database.apply(mnt);
            FaultRun run = new FaultRun(db, Files.createDirectories(dir.resolve("histories")));
            HikariDataSource ds = db.pool(2);
            HikariDataSource faultyPool = ds;
            try (History before = run.history("before"); History during = run.history("during")) {
                Workload.createTables(ds, run.store);
                FaultClient ok = run.client("before", ds, before, FaultClient.Faults.NONE);
                for (int i = 0; i < 10; i++) {
                    ok.untilAnswered("k" + i, Duration.ofSeconds(10));
                }
                if (disk == Disk.FULL) {
                    fill(mnt.resolve("filler"));
                } else {
                    ds.close(); // a file system with files open for writing cannot turn read-only
                    command("mount", "-o", "remount,ro", mnt.toString());
                    faultyPool = db.lazyPool(2);
                }
                FaultClient faulty = run.client("during", faultyPool, during, FaultClient.Faults.NONE);
                for (int i = 10; i < 20; i++) {
                    assertThat(faulty.attempt("k" + i)).as("a new key answered on a %s disk", disk).isFalse();
                }
                assertThat(faulty.failures()).as("errors on a %s disk", disk).isNotEmpty().allSatisfy(e -> assertThat(messages(e))
                        .as("the error names the disk's state: %s", messages(e))
                        .containsAnyOf(disk == Disk.FULL ? new String[] {"no space left", "sqlite_full", "disk is full"}
                                // SQLite in WAL mode writes its shared-memory file even to read: on a read-only disk
                                // it cannot open the database at all, and says so.
                                : new String[] {"read-only", "readonly", "read only", "sqlite_cantopen"}));
            } finally {
                closeQuietly(faultyPool);
                closeQuietly(ds);
                if (disk == Disk.FULL) {
                    Files.deleteIfExists(mnt.resolve("filler"));
                } else {
                    command("mount", "-o", "remount,rw", mnt.toString());
                }
            }
            try (HikariDataSource reopened = db.pool(2)) {
                run.check(reopened, FaultRun.INFRASTRUCTURE_FAILURES, "a " + disk.name().toLowerCase(Locale.ROOT)
                        + " disk under an embedded database");
            }
        } finally {
            command("umount", "-l", mnt.toString());
        }
    }

    /** A pool on a database that cannot write may fail to close cleanly; the check opens it afresh. */
    private static void closeQuietly(HikariDataSource ds) {
        try {
            ds.close();
        } catch (RuntimeException ignored) {
            // see above
        }
    }

    private static String messages(Throwable e) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            all.append(t).append(" | ");
            for (Throwable s : t.getSuppressed()) {
                all.append(s).append(" | ");
            }
        }
        return all.toString().toLowerCase(Locale.ROOT);
    }

    private static void fill(Path file) {
        byte[] zeros = new byte[64 * 1024];
        try (OutputStream out = Files.newOutputStream(file)) {
            while (true) {
                out.write(zeros);
            }
        } catch (IOException full) {
            // no space left: the point
        }
    }

    private static void mount(Path mnt) throws Exception {
        Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", mnt.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) {
            String message = "cannot mount a small tmpfs for the disk test (needs root or CAP_SYS_ADMIN): " + out.strip();
            TestEnvironment.unavailable(message);
        }
    }

    private static void command(String... args) throws Exception {
        Process p = new ProcessBuilder(List.of(args)).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as("%s: %s", String.join(" ", args), out).isZero();
    }
}
