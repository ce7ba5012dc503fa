package dev.idempotency.examples.charges;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.examples.charges.ChargeCrashChild.Operation;
import dev.idempotency.examples.charges.ChargeCrashTest.Database;
import dev.idempotency.testsupport.ChildJvm;
import dev.idempotency.testsupport.DatabaseServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Clients that never come back, and recovery workers killed too: every charge a client started is
 * finished by the workers alone, and charged once.
 *
 * <p>Client processes ({@link ChargeCrashChild} in its {@code once} mode) try each operation of a
 * list once and never again, whatever the answer, and are killed with SIGKILL at random moments, in
 * every phase, as {@link ChargeCrashTest} kills them; the next client gets only the operations no
 * client has started, so an operation a killed client left behind is never retried by a client.
 * Three worker processes ({@link ChargeCrashChild} in its {@code worker} mode: the
 * {@link ChargeService#recoveryWorker recovery worker}, a pass every 50 ms) run on the same database
 * throughout, and one of them, chosen at random, is killed and restarted between the clients' runs
 * and while the last operations settle. {@code idempotency.recovery.kills} kills in all (8 by
 * default, half of clients and half of workers; {@code -Didempotency.recovery.kills=300} for the deep
 * setting). The lease is 400 ms.
 *
 * <p>Then: every operation whose claim committed has a final record (completed, or failed for a
 * declined card) and one charge row in its final state, none is left in progress or listed for the
 * worker; the provider charged each such operation exactly once (none for a declined card), and none
 * whose claim did not commit.
 */
class RecoveryWorkerCrashTest {

    private static final int KILLS = Integer.getInteger("idempotency.recovery.kills", 8);
    private static final Duration LEASE = Duration.ofMillis(400);
    private static final String DECLINED_CARD = "tok_declined";
    private static final int WORKERS = 3;

    /** PostgreSQL, the server of the environment: several processes on one database. */
    @Test
    void postgres(@TempDir Path dir) throws Exception {
        DatabaseServer postgres = DatabaseServer.postgres();
        new Abandoned(new Database("PostgreSQL", postgres.url(), postgres.user(), postgres.password()), dir).run();
    }

    private static final class Abandoned {
        private final Database db;
        private final Path dir;
        private final String scope = "abandoned-" + UUID.randomUUID().toString().substring(0, 8);
        private final List<Operation> operations = new ArrayList<>();
        private final Set<String> started = ConcurrentHashMap.newKeySet();
        private final AtomicInteger events = new AtomicInteger();
        private final Process[] workers = new Process[WORKERS];
        private int clientKills;
        private int workerKills;
        private int clientRuns;

        Abandoned(Database db, Path dir) {
            this.db = db;
            this.dir = dir;
            for (int i = 0; i < Math.max(40, KILLS * 3); i++) {
                String card = i % 10 == 9 ? DECLINED_CARD : "tok_visa";
                operations.add(new Operation("op-" + i, new ChargeRequest("cust-" + i + "-" + scope, card, 100 + i)));
            }
        }

        void run() throws Exception {
            long began = System.nanoTime();
            try (FakePaymentProvider provider = FakePaymentProvider.start(); var setup = db.pool()) {
                provider.declineCard(DECLINED_CARD);
                provider.delay(Duration.ZERO, Duration.ofMillis(30));
                new ChargeService(setup, new PaymentProviderClient(provider.uri(), Duration.ofSeconds(5)), LEASE).createTables();
                try {
                    for (int w = 0; w < WORKERS; w++) {
                        workers[w] = startWorker(provider);
                    }
                    while (started.size() < operations.size()) {
                        runClient(provider);
                        assertThat(clientRuns).as("client runs").isLessThan(operations.size() * 2 + 50);
                        maybeKillAWorker(provider);
                    }
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                    while (inProgress(setup) > 0 && System.nanoTime() < deadline) {
                        Thread.sleep(100);
                        if (workerKills < KILLS / 2 && ThreadLocalRandom.current().nextInt(4) == 0) {
                            killAWorker(provider);
                        }
                    }
                } finally {
                    for (Process worker : workers) {
                        if (worker != null) {
                            worker.destroyForcibly().waitFor();
                        }
                    }
                }
                check(setup, provider, (System.nanoTime() - began) / 1e9);
            }
        }

        private Process startWorker(FakePaymentProvider provider) throws Exception {
            Process worker = child(provider, "worker").start();
            CountDownLatch ready = new CountDownLatch(1);
            Thread reader = new Thread(() -> read(worker, ready, false), "recovery-worker-reader");
            reader.setDaemon(true);
            reader.start();
            assertThat(ready.await(60, TimeUnit.SECONDS)).as("worker ready").isTrue();
            return worker;
        }

        private void maybeKillAWorker(FakePaymentProvider provider) throws Exception {
            if (workerKills < KILLS / 2) {
                killAWorker(provider);
            }
        }

        private void killAWorker(FakePaymentProvider provider) throws Exception {
            int w = ThreadLocalRandom.current().nextInt(WORKERS);
            Thread.sleep(ThreadLocalRandom.current().nextInt(0, 60));
            workers[w].destroyForcibly().waitFor();
            workerKills++;
            workers[w] = startWorker(provider);
        }

        /** One client on the operations no client has started yet, killed at a random moment while kills remain. */
        private void runClient(FakePaymentProvider provider) throws Exception {
            List<Operation> fresh = operations.stream().filter(op -> !started.contains(op.id())).toList();
            Path file = dir.resolve("operations.tsv");
            ChargeCrashChild.write(file, fresh);
            Process client = child(provider, file.toString(), "once").start();
            clientRuns++;
            CountDownLatch ready = new CountDownLatch(1);
            Thread reader = new Thread(() -> read(client, ready, true), "recovery-client-reader");
            reader.start();
            if (clientKills < KILLS - KILLS / 2) {
                ThreadLocalRandom random = ThreadLocalRandom.current();
                ready.await(60, TimeUnit.SECONDS);
                int wanted = random.nextInt(1, 13);
                int base = events.get() + provider.requests();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (client.isAlive() && events.get() + provider.requests() - base < wanted && System.nanoTime() < deadline) {
                    Thread.sleep(1);
                }
                Thread.sleep(random.nextInt(0, 26));
                if (client.isAlive()) {
                    client.destroyForcibly().waitFor();
                    reader.join();
                    clientKills++;
                    return;
                }
            }
            assertThat(client.waitFor(120, TimeUnit.SECONDS)).as("the last client finished").isTrue();
            reader.join();
        }

        private ProcessBuilder child(FakePaymentProvider provider, String... mode) {
            List<String> args = new ArrayList<>(List.of(db.url(), db.user() == null ? "-" : db.user(),
                    db.password() == null ? "-" : db.password(), provider.uri().toString(), Long.toString(LEASE.toMillis()), scope));
            args.addAll(List.of(mode));
            return new ProcessBuilder(ChildJvm.command(256, ChargeCrashChild.class, args)).redirectErrorStream(true);
        }

        private void read(Process child, CountDownLatch ready, boolean client) {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    String[] f = line.split(" ", 3);
                    if (f[0].equals("ready")) {
                        ready.countDown();
                    } else if (client && f[0].equals("start")) {
                        started.add(f[1]);
                        events.incrementAndGet();
                    } else if (client && (f[0].equals("done") || f[0].equals("busy") || f[0].equals("error"))) {
                        events.incrementAndGet();
                    }
                }
            } catch (IOException killed) {
                // The stream ends with the process.
            }
        }

        private int inProgress(javax.sql.DataSource setup) throws SQLException {
            try (Connection c = setup.getConnection()) {
                return count(c, "SELECT COUNT(*) FROM idempotency_record WHERE scope = ? AND status = 'IN_PROGRESS'");
            }
        }

        private void check(javax.sql.DataSource setup, FakePaymentProvider provider, double seconds) throws SQLException {
            Map<String, String> records;
            int resumed;
            int attemptsBeyondFirst;
            try (Connection c = setup.getConnection()) {
                records = rows(c, "SELECT key_id, status FROM idempotency_record WHERE scope = ?");
                resumed = count(c, "SELECT COUNT(*) FROM idempotency_record WHERE scope = ? AND attempts > 1");
                attemptsBeyondFirst = count(c, "SELECT COALESCE(SUM(attempts - 1), 0) FROM idempotency_record WHERE scope = ?");
                assertThat(count(c, "SELECT COUNT(*) FROM idempotency_record_pending WHERE scope = ?"))
                        .as("operations still listed for the worker").isZero();
                Map<String, String> charges = ChargeCrashTest.rows(c, "SELECT operation, status FROM " + ChargeService.TABLE + " WHERE operation LIKE ?",
                        scope + "/%");
                for (Operation op : operations) {
                    boolean declined = op.request().card().equals(DECLINED_CARD);
                    String record = records.get(op.id());
                    String row = charges.get(IdempotencyKey.of(scope, op.id()).toString());
                    if (record == null) {
                        assertThat(row).as("charge row of %s, whose claim never committed", op.id()).isNull();
                        continue;
                    }
                    assertThat(record).as("record of %s", op.id()).isEqualTo(declined ? "FAILED" : "COMPLETED");
                    assertThat(row).as("charge row of %s", op.id()).isEqualTo(declined ? "declined" : "succeeded");
                }
            }
            Map<String, Long> chargesByCustomer = provider.charges().stream()
                    .collect(Collectors.groupingBy(FakePaymentProvider.Charge::customer, Collectors.counting()));
            for (Operation op : operations) {
                boolean charged = records.containsKey(op.id()) && !op.request().card().equals(DECLINED_CARD);
                assertThat(chargesByCustomer.getOrDefault(op.request().customer(), 0L)).as("provider charges for %s", op.id())
                        .isEqualTo(charged ? 1L : 0L);
            }
            assertThat(clientKills + workerKills).as("kills made").isGreaterThanOrEqualTo(KILLS);
            System.out.printf("RecoveryWorkerCrashTest [%s]: %d kills (%d clients, %d workers) in %.1f s; %d operations, %d started"
                            + " (%d claims committed), no client retry; %d finished after a take-over (%d attempts beyond the"
                            + " first), every one charged once; %d provider charges%n",
                    db.name(), clientKills + workerKills, clientKills, workerKills, seconds, operations.size(), started.size(),
                    records.size(), resumed, attemptsBeyondFirst, provider.chargesMade());
        }

        private Map<String, String> rows(Connection c, String sql) throws SQLException {
            return ChargeCrashTest.rows(c, sql, scope);
        }

        private int count(Connection c, String sql) throws SQLException {
            return ChargeCrashTest.count(c, sql, scope);
        }
    }
}
