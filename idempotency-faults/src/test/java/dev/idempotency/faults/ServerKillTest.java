package dev.idempotency.faults;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.testsupport.TestEnvironment;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * Contract 7 (docs/contract.md), "database down": the database server is killed with SIGKILL, with
 * its every process, under load, {@value #KILLS} times per run ({@value #DEEP_KILLS} deep, any
 * number with {@code -Didempotency.faults.serverKills=N}), and started again (crash
 * recovery); the clients, threads on a HikariCP pool, see their errors, reconnect through the pool and
 * go on. Then the histories are checked: nothing acknowledged is lost, nothing ran twice, nothing is
 * stuck.
 *
 * <p>The servers are a dedicated PostgreSQL and MariaDB of this test's own, on free ports of a fixed
 * range outside the ephemeral one ({@link #freePort}), in a
 * folder of their own, started by {@code scripts/db-servers.sh} with durable settings
 * ({@code IDEMPOTENCY_DB_DURABLE=1}: a killed server must not lose acknowledged commits), and stopped
 * and deleted at the end: the shared servers the other tests use are never touched. Needs what the
 * script needs (root, or the server binaries); elsewhere the test is skipped, under CI it fails.
 */
@Isolated
class ServerKillTest {

    static final int KILLS = 2;
    static final int DEEP_KILLS = 25;
    static final int THREADS = 4;
    static final int PORTS_FROM = 17_000;
    static final int PORTS_TO = 17_999;

    private static Path base;
    private static Map<String, String> env;

    @BeforeAll
    static void startDedicatedServers() throws Exception {
        Path script = Path.of(System.getProperty("idempotency.faults.scripts", "../scripts"), "db-servers.sh");
        // Not under JUnit's private temporary folder: the postgres user must be able to reach it.
        base = Files.createTempDirectory("idempotency-faults-servers", PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwxr-xr-x")));
        int pgPort = freePort(-1);
        env = new HashMap<>(Map.of("IDEMPOTENCY_DB_DIR", base.toString(), "IDEMPOTENCY_PG_PORT", Integer.toString(pgPort),
                "IDEMPOTENCY_MARIADB_PORT", Integer.toString(freePort(pgPort)), "IDEMPOTENCY_DB_DURABLE", "1"));
        String out = script(script, "start");
        if (out == null) {
            String message = "could not start dedicated servers with " + script + " (see its output above): the server-kill test needs"
                    + " root or the PostgreSQL and MariaDB server binaries";
            TestEnvironment.unavailable(message);
        }
        for (String line : out.split("\n")) {
            if (line.startsWith("export ")) {
                String[] kv = line.substring("export ".length()).split("=", 2);
                env.put(kv[0], kv[1]);
            }
        }
    }

    @AfterAll
    static void stopDedicatedServers() throws Exception {
        if (base != null) {
            script(Path.of(System.getProperty("idempotency.faults.scripts", "../scripts"), "db-servers.sh"), "stop");
            try (var files = Files.walk(base)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    @Test
    void postgres(@TempDir Path dir) throws Exception {
        killUnderLoad(new FaultDatabase("PostgreSQL (dedicated, durable)", env.get("IDEMPOTENCY_PG_URL"), "idem", "idem", true), dir,
                base.resolve("postgresql/data/postmaster.pid"));
    }

    @Test
    void mariadb(@TempDir Path dir) throws Exception {
        killUnderLoad(new FaultDatabase("MariaDB (dedicated, durable)", env.get("IDEMPOTENCY_MARIADB_URL"), "idem", "idem", true), dir,
                base.resolve("mariadb/mysqld.pid"));
    }

    private void killUnderLoad(FaultDatabase db, Path dir, Path pidFile) throws Exception {
        int kills = Integer.getInteger("idempotency.faults.serverKills", FaultRun.DEEP ? DEEP_KILLS : KILLS);
        FaultRun run = new FaultRun(db, dir);
        long started = System.nanoTime();
        try (HikariDataSource ds = db.pool(THREADS); History history = run.history("load")) {
            ds.setConnectionTimeout(2_000); // while the server is down, attempts fail fast and are tried again
            Workload.createTables(ds, run.store);
            FaultClient client = run.client("load", ds, history, FaultClient.Faults.NONE);
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> load = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                Thread thread = new Thread(() -> {
                    while (!stop.get()) {
                        if (!client.attempt(FaultClient.key(ThreadLocalRandom.current().nextInt(200)))) {
                            pause(20);
                        }
                    }
                }, "load-" + t);
                thread.start();
                load.add(thread);
            }
            try {
                for (int k = 0; k < kills; k++) {
                    Thread.sleep(ThreadLocalRandom.current().nextInt(200, 1_000));
                    killServer(pidFile);
                    assertThat(script(Path.of(System.getProperty("idempotency.faults.scripts", "../scripts"), "db-servers.sh"), "start"))
                            .as("restart %d of %s", k + 1, db).isNotNull();
                }
                Thread.sleep(500); // load on the restarted server
            } finally {
                stop.set(true);
                for (Thread t : load) {
                    t.join();
                }
            }
            run.check(ds, FaultRun.INFRASTRUCTURE_FAILURES, String.format("%d SIGKILLs of the server under load of %d threads, restarted"
                    + " each time, in %.1f s", kills, THREADS, (System.nanoTime() - started) / 1e9));
        }
    }

    /** SIGKILL to the server and every process it started, as a crash of its machine would end them. */
    private static void killServer(Path pidFile) throws IOException, InterruptedException {
        long pid = Long.parseLong(Files.readAllLines(pidFile, StandardCharsets.UTF_8).get(0).strip());
        ProcessHandle server = ProcessHandle.of(pid).orElseThrow(() -> new AssertionError("no server process " + pid));
        List<ProcessHandle> all = new ArrayList<>(server.descendants().toList());
        all.add(0, server);
        all.forEach(ProcessHandle::destroyForcibly);
        for (ProcessHandle p : all) {
            p.onExit().orTimeout(30, TimeUnit.SECONDS).join();
        }
    }

    /** @return the script's standard output, or {@code null} if it failed */
    private static String script(Path script, String command) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder("bash", script.toString(), command).redirectError(ProcessBuilder.Redirect.INHERIT);
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return p.waitFor() == 0 ? out : null;
    }

    /**
     * A port for a dedicated server, free now, from {@value #PORTS_FROM} to {@value #PORTS_TO}: below
     * the ephemeral range (Linux: 32768 to 60999), so that while a killed server is down, no client's
     * outgoing connection can be given its port and keep it from starting again.
     *
     * @param taken a port already chosen, not to be chosen again (-1 for none)
     */
    static int freePort(int taken) {
        int start = ThreadLocalRandom.current().nextInt(PORTS_FROM, PORTS_TO + 1);
        for (int i = 0; i <= PORTS_TO - PORTS_FROM; i++) {
            int port = PORTS_FROM + (start - PORTS_FROM + i) % (PORTS_TO - PORTS_FROM + 1);
            if (port == taken) {
                continue;
            }
            try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                return s.getLocalPort();
            } catch (IOException inUse) {
                // try the next one
            }
        }
        throw new AssertionError("no free port from " + PORTS_FROM + " to " + PORTS_TO + " for a dedicated server");
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
