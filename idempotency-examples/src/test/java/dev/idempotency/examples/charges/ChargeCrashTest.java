package dev.idempotency.examples.charges;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.Outcome;
import dev.idempotency.examples.charges.ChargeCrashChild.Operation;
import dev.idempotency.testsupport.ChildJvm;
import dev.idempotency.testsupport.DatabaseServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
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
 * Kills the charge service with SIGKILL at random moments, over and over, and checks that every
 * charge still happens exactly once.
 *
 * <p>A child JVM ({@link ChargeCrashChild}, on this test's class path) charges a fixed list of
 * operations through {@link ChargeService}, against the database and a {@link FakePaymentProvider}
 * that runs in this JVM, so that it survives the kills and counts the charges really made. The test
 * kills the child ({@link Process#destroyForcibly()}: SIGKILL on Linux) after a random number of
 * events (an operation started or answered, a request reaching the provider) and a random delay of
 * up to 25 ms, so that kills land in every phase: the claim and prepare transaction, the call (the
 * provider waits up to 30 ms before it answers), the finish transaction, and between them. It
 * restarts the child on the operations it has not seen answered (so answers lost to a kill are
 * asked again, and must replay) until {@code idempotency.crash.kills} kills (8 by default; run
 * {@code -Didempotency.crash.kills=300} for the deep setting) have been made, then lets it finish.
 * The lease is 400 ms, so that the attempt after a kill takes the key over quickly.
 *
 * <p>Then: every operation has one completed record and one charge row, {@code succeeded} with the
 * provider's charge id (or {@code declined} for the declined card), and no row is left
 * {@code pending}; the provider made exactly one charge per operation (none for a declined card);
 * every answer the child saw for an operation was the same; and no key is in progress any more: a
 * last pass over every operation replays without reaching the provider.
 */
class ChargeCrashTest {

    private static final int KILLS = Integer.getInteger("idempotency.crash.kills", 8);
    private static final Duration LEASE = Duration.ofMillis(400);
    private static final String DECLINED_CARD = "tok_declined";

    /**
     * H2 in a file. H2 writes committed changes to the file in the background, up to
     * {@code WRITE_DELAY} (500 ms by default) after the commit, so a killed process loses the commits
     * of its last moments, after it has acted on them (with the default, this test finds records of
     * answered operations missing or back in progress). The URL sets {@code WRITE_DELAY=0}, which
     * writes at each commit. Only the service's process opens the file until the last run, as in a
     * deployment: with this test opening and closing it cleanly between kills as well, H2 2.3.232
     * reported the file corrupted ("Double mark") within a few hundred kills.
     */
    @Test
    void h2File(@TempDir Path dir) throws Exception {
        new Crashes(new Database("H2 file", "jdbc:h2:file:" + dir.resolve("crash") + ";WRITE_DELAY=0", null, null), dir).run();
    }

    /** PostgreSQL: the server of the environment ({@code IDEMPOTENCY_PG_URL}, {@code _USER}, {@code _PASSWORD}). */
    @Test
    void postgres(@TempDir Path dir) throws Exception {
        DatabaseServer postgres = DatabaseServer.postgres();
        new Crashes(new Database("PostgreSQL", postgres.url(), postgres.user(), postgres.password()),
                dir).run();
    }

    /** Where the child and the checks connect. */
    record Database(String name, String url, String user, String password) {
        /** @return whether the database lives in the child's process, so the test opens it only after the last run */
        boolean singleProcess() {
            return url.startsWith("jdbc:h2:file:");
        }

        Connection connect() throws SQLException {
            return user == null ? DriverManager.getConnection(url) : DriverManager.getConnection(url, user, password);
        }

        HikariDataSource pool() {
            HikariConfig config = new HikariConfig();
            config.setJdbcUrl(url);
            if (user != null) {
                config.setUsername(user);
                config.setPassword(password);
            }
            config.setMaximumPoolSize(4);
            return new HikariDataSource(config);
        }
    }

    /** One run of the test on one database. */
    private static final class Crashes {
        private final Database db;
        private final Path dir;
        private final String scope = "crash-" + UUID.randomUUID().toString().substring(0, 8);
        private final List<Operation> operations = new ArrayList<>();
        private final Map<String, Set<String>> answers = new ConcurrentHashMap<>();
        private final Set<String> inFlight = ConcurrentHashMap.newKeySet();
        private final AtomicInteger events = new AtomicInteger();
        private final AtomicInteger busy = new AtomicInteger();
        private final Map<String, AtomicInteger> errors = new ConcurrentHashMap<>();
        private final Map<String, Integer> atKill = new TreeMap<>();
        private final Deque<String> lastLines = new ArrayDeque<>();
        private int kills;
        private int runs;

        Crashes(Database db, Path dir) {
            this.db = db;
            this.dir = dir;
            for (int i = 0; i < Math.max(40, KILLS * 4); i++) {
                String card = i % 10 == 9 ? DECLINED_CARD : "tok_visa";
                operations.add(new Operation("op-" + i, new ChargeRequest("cust-" + i, card, 100 + i)));
            }
        }

        void run() throws Exception {
            long started = System.nanoTime();
            try (FakePaymentProvider provider = FakePaymentProvider.start(); HikariDataSource setup = db.pool()) {
                provider.declineCard(DECLINED_CARD);
                provider.delay(Duration.ZERO, Duration.ofMillis(30));
                new ChargeService(setup, new PaymentProviderClient(provider.uri(), Duration.ofSeconds(5)), LEASE).createTables();
                setup.close(); // an H2 file is opened by one process at a time
                while (!runChild(provider)) {
                    assertThat(runs).as("child runs (%d kills)", kills).isLessThan(KILLS * 5 + 50);
                }
                double seconds = (System.nanoTime() - started) / 1e9;
                check(provider, seconds);
            }
        }

        /** @return whether the child finished every operation (rather than being killed) */
        private boolean runChild(FakePaymentProvider provider) throws Exception {
            List<Operation> pending = operations.stream().filter(op -> !answers.containsKey(op.id())).toList();
            Path file = dir.resolve("operations.tsv");
            ChargeCrashChild.write(file, pending);
            Process child = new ProcessBuilder(ChildJvm.command(256, ChargeCrashChild.class, List.of(db.url(),
                    db.user() == null ? "-" : db.user(), db.password() == null ? "-" : db.password(), provider.uri().toString(),
                    Long.toString(LEASE.toMillis()), scope, file.toString())))
                    .redirectErrorStream(true).start();
            runs++;
            inFlight.clear();
            CountDownLatch ready = new CountDownLatch(1);
            Thread reader = new Thread(() -> read(child, ready), "crash-child-reader");
            reader.start();
            if (kills < KILLS) {
                ThreadLocalRandom random = ThreadLocalRandom.current();
                while (!ready.await(10, TimeUnit.MILLISECONDS) && child.isAlive()) {
                    Thread.onSpinWait();
                }
                int wanted = random.nextInt(1, 13);
                int base = events.get() + provider.requests();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (child.isAlive() && events.get() + provider.requests() - base < wanted && System.nanoTime() < deadline) {
                    Thread.sleep(1);
                }
                Thread.sleep(random.nextInt(0, 26));
                if (child.isAlive()) {
                    child.destroyForcibly();
                    child.waitFor();
                    reader.join();
                    kills++;
                    classifyKill(provider);
                    return false;
                }
            }
            boolean exited = child.waitFor(120, TimeUnit.SECONDS);
            if (!exited) {
                child.destroyForcibly();
            }
            reader.join();
            if (!exited || child.exitValue() != 0) {
                fail("the child " + (exited ? "exited with " + child.exitValue() : "did not finish") + " after " + kills + " kills in "
                        + runs + " runs (errors seen: " + errors.keySet() + "); its last lines:\n" + String.join("\n", lastLines));
            }
            assertThat(kills).as("kills made before the operations ran out (more operations are needed)").isGreaterThanOrEqualTo(KILLS);
            return true;
        }

        private void read(Process child, CountDownLatch ready) {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    String[] f = line.split(" ", 4);
                    switch (f[0]) {
                        case "ready" -> ready.countDown();
                        case "start" -> {
                            inFlight.add(f[1]);
                            events.incrementAndGet();
                        }
                        case "done" -> {
                            answers.computeIfAbsent(f[1], x -> ConcurrentHashMap.newKeySet()).add(f[2] + " " + f[3]);
                            inFlight.remove(f[1]);
                            events.incrementAndGet();
                        }
                        case "busy" -> {
                            busy.incrementAndGet();
                            inFlight.remove(f[1]);
                        }
                        case "error" -> {
                            errors.computeIfAbsent(f.length > 2 ? f[2] : "?", x -> new AtomicInteger()).incrementAndGet();
                            inFlight.remove(f[1]);
                        }
                        default -> {
                            synchronized (lastLines) {
                                lastLines.addLast(line);
                                if (lastLines.size() > 40) {
                                    lastLines.removeFirst();
                                }
                            }
                        }
                    }
                }
            } catch (IOException killed) {
                // The stream ends with the process.
            }
        }

        /** Where the operations the child had under way stood when it was killed, by the database and the provider. */
        private void classifyKill(FakePaymentProvider provider) throws SQLException {
            if (inFlight.isEmpty()) {
                atKill.merge("no operation under way (starting, or between operations)", 1, Integer::sum);
                return;
            }
            if (db.singleProcess()) {
                atKill.merge("an operation under way (the file is not opened between kills)", 1, Integer::sum);
                return;
            }
            Set<String> charged = provider.charges().stream().map(FakePaymentProvider.Charge::idempotencyKey).collect(Collectors.toSet());
            try (Connection c = db.connect()) {
                for (String op : inFlight) {
                    String status = recordStatus(c, op);
                    String where;
                    if (status == null) {
                        where = "claim and prepare not committed";
                    } else if (status.equals("IN_PROGRESS")) {
                        where = charged.contains(key(op).derive("downstream").id())
                                ? "provider charged, finish not committed" : "prepare committed, provider not charged (yet)";
                    } else {
                        where = "finish committed, answer not printed";
                    }
                    atKill.merge(where, 1, Integer::sum);
                }
            }
        }

        private void check(FakePaymentProvider provider, double seconds) throws Exception {
            Set<String> declined = operations.stream().filter(op -> op.request().card().equals(DECLINED_CARD)).map(Operation::id)
                    .collect(Collectors.toSet());
            // Every answer the child saw for an operation was the same: retries and answers lost to kills replayed.
            for (Operation op : operations) {
                assertThat(answers.get(op.id())).as("answers to %s", op.id()).isNotNull()
                        .allSatisfy(a -> assertThat(a).doesNotStartWith("MISMATCH"));
                Set<String> values = answers.get(op.id()).stream().map(a -> a.substring(a.indexOf(' ') + 1)).collect(Collectors.toSet());
                assertThat(values).as("distinct answers to %s: %s", op.id(), answers.get(op.id())).hasSize(1);
            }
            // The provider made exactly one charge per operation, none for a declined card.
            Map<String, Long> chargesByCustomer = provider.charges().stream()
                    .collect(Collectors.groupingBy(FakePaymentProvider.Charge::customer, Collectors.counting()));
            Map<String, String> providerIdByCustomer = provider.charges().stream()
                    .collect(Collectors.toMap(FakePaymentProvider.Charge::customer, FakePaymentProvider.Charge::id, (a, b) -> a + "," + b));
            for (Operation op : operations) {
                assertThat(chargesByCustomer.getOrDefault(op.request().customer(), 0L)).as("provider charges for %s", op.id())
                        .isEqualTo(declined.contains(op.id()) ? 0L : 1L);
            }
            assertThat(provider.chargesMade()).isEqualTo(operations.size() - declined.size());

            int takenOver;
            int extraAttempts;
            try (Connection c = db.connect()) {
                // One record per key, completed (failed for a declined card); none in progress.
                Map<String, String> records = rows(c, "SELECT key_id, status FROM idempotency_record WHERE scope = ?", scope);
                assertThat(records).hasSize(operations.size());
                for (Operation op : operations) {
                    assertThat(records.get(op.id())).as("record of %s", op.id()).isEqualTo(declined.contains(op.id()) ? "FAILED" : "COMPLETED");
                }
                // One charge row per operation, in its final state, with the provider's id; no pending row.
                Map<String, String> charges = rows(c, "SELECT operation, status || ' ' || COALESCE(provider_charge_id, '-') FROM "
                        + ChargeService.TABLE + " WHERE operation LIKE ?", scope + "/%");
                assertThat(count(c, "SELECT COUNT(*) FROM " + ChargeService.TABLE + " WHERE operation LIKE ?", scope + "/%"))
                        .as("charge rows").isEqualTo(operations.size());
                for (Operation op : operations) {
                    assertThat(charges.get(key(op.id()).toString())).as("charge row of %s", op.id()).isEqualTo(declined.contains(op.id())
                            ? "declined -" : "succeeded " + providerIdByCustomer.get(op.request().customer()));
                }
                takenOver = count(c, "SELECT COUNT(*) FROM idempotency_record WHERE scope = ? AND attempts > 1", scope);
                extraAttempts = count(c, "SELECT COALESCE(SUM(attempts - 1), 0) FROM idempotency_record WHERE scope = ?", scope);
            }
            // No key stays in progress: a last pass replays every operation without reaching the provider.
            int requests = provider.requests();
            try (HikariDataSource pool = db.pool()) {
                ChargeService service = new ChargeService(pool, new PaymentProviderClient(provider.uri(), Duration.ofSeconds(5)), LEASE);
                for (Operation op : operations) {
                    Outcome<String> outcome = service.charge(key(op.id()), op.request());
                    assertThat(outcome.isReplay()).as("%s replays: %s", op.id(), outcome).isTrue();
                }
            }
            assertThat(provider.requests()).as("requests to the provider during the last pass").isEqualTo(requests);

            System.out.printf("ChargeCrashTest [%s]: %d kills over %d child runs in %.1f s; %d operations (%d declined);"
                            + " %d keys taken over or retried (%d attempts beyond the first); %d answers replayed; %d busy answers;"
                            + " errors seen: %s;"
                            + " %d provider requests for %d charges; operations under way at a kill: %s%n",
                    db.name(), kills, runs, seconds, operations.size(), declined.size(), takenOver, extraAttempts,
                    answers.values().stream().filter(a -> a.stream().anyMatch(v -> v.startsWith("REPLAYED"))).count(), busy.get(),
                    errors.entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().get(), (a, b) -> a, TreeMap::new)),
                    requests, provider.chargesMade(), atKill);
        }

        private IdempotencyKey key(String op) {
            return IdempotencyKey.of(scope, op);
        }

        private String recordStatus(Connection c, String op) throws SQLException {
            return rows(c, "SELECT key_id, status FROM idempotency_record WHERE scope = ? AND key_id = '" + op + "'", scope).get(op);
        }
    }

    /** The rows of a two-column query with one parameter, as a map (a key seen twice is joined with AND). */
    static Map<String, String> rows(Connection c, String sql, String parameter) throws SQLException {
        Map<String, String> rows = new TreeMap<>();
        try (PreparedStatement s = c.prepareStatement(sql)) {
            s.setString(1, parameter);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    rows.merge(rs.getString(1), rs.getString(2), (a, b) -> a + " AND " + b);
                }
            }
        }
        return rows;
    }

    /** The count a query with one parameter answers. */
    static int count(Connection c, String sql, String parameter) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(sql)) {
            s.setString(1, parameter);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }
}
