package dev.idempotency.scale;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.RetryPolicy;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.jdbc.JdbcTransactions;
import dev.idempotency.jdbc.RetryableFailures;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The library on a three-node MariaDB Galera cluster ({@code scripts/db-cluster.sh}). Galera takes
 * no row lock across nodes: two nodes that claim one key at once both insert the record, and the
 * transaction that loses certification is refused at {@code COMMIT} (or aborted by the winner's
 * replicated write) with SQLState 40001, error 1213. The runner retries it, and the retry replays
 * the winner's result; a caller that runs its own transaction gets a failure that
 * {@link RetryableFailures} recognises. A node killed under load loses no acknowledged key.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GaleraTest {

    private static final int RACES = 60;

    private final List<HikariDataSource> nodes = new ArrayList<>();
    private HikariDataSource verify;
    private final AtomicInteger commitConflicts = new AtomicInteger();
    private final AtomicInteger retries = new AtomicInteger();
    private final String run = UUID.randomUUID().toString().substring(0, 8);

    @BeforeAll
    void open() throws SQLException {
        for (String url : Cluster.galeraUrls()) {
            nodes.add(Cluster.pool(url, "IDEMPOTENCY_GALERA", 8, Map.of()));
        }
        // Reads for checking wait until the node has applied every write the cluster committed before.
        verify = Cluster.pool(Cluster.galeraUrls().get(0), "IDEMPOTENCY_GALERA", 2, Map.of("sessionVariables", "wsrep_sync_wait=1"));
        JdbcIdempotencyStore.ofDefaults().createTableIfMissing(nodes.get(0));
        try (Connection c = nodes.get(0).getConnection(); Statement s = c.createStatement()) {
            s.executeUpdate("CREATE TABLE IF NOT EXISTS work_log (id BIGINT AUTO_INCREMENT PRIMARY KEY,"
                    + " k VARCHAR(200) NOT NULL, v VARCHAR(200) NOT NULL, KEY (k))");
        }
    }

    @AfterAll
    void close() {
        nodes.forEach(HikariDataSource::close);
        if (verify != null) {
            verify.close();
        }
    }

    /** The node's pool, whose connections count the commits refused as conflicts. */
    private DataSource countingCommitConflicts(DataSource pool) {
        return (DataSource) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {DataSource.class}, (p, m, a) -> {
            Object result = invoke(pool, m, a);
            if (!(result instanceof Connection real)) {
                return result;
            }
            return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class}, (cp, cm, ca) -> {
                try {
                    return invoke(real, cm, ca);
                } catch (SQLException e) {
                    if (cm.getName().equals("commit") && RetryableFailures.isRetryable(e)) {
                        commitConflicts.incrementAndGet();
                    }
                    throw e;
                }
            });
        });
    }

    private static Object invoke(Object target, java.lang.reflect.Method m, Object[] a) throws Throwable {
        try {
            return m.invoke(target, a);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    private ManagedIdempotency<Connection> managed(int node) {
        Idempotency<Connection> engine = Idempotency.builder(JdbcIdempotencyStore.ofDefaults()).listener(new IdempotencyListener() {
            @Override
            public void onRetry(IdempotencyKey key, int attempt, Throwable failure, Duration backoff) {
                // Refused at COMMIT: TransactionConflictException from the runner. Aborted earlier by the
                // winner's replicated write (a "brute force" abort): the work's own statement fails with 1213.
                assertThat(RetryableFailures.isRetryable(failure)).as("%s", failure).isTrue();
                retries.incrementAndGet();
            }
        }).build();
        return ManagedIdempotency.builder(engine, JdbcTransactions.of(countingCommitConflicts(nodes.get(node))))
                .retryPolicy(RetryPolicy.builder().maxAttempts(10).build()).build();
    }

    /** The work: one row per execution, and a value that names the execution. */
    private static String work(Connection tx, String key, String node) throws SQLException {
        String value = node + ":" + UUID.randomUUID();
        try (PreparedStatement s = tx.prepareStatement("INSERT INTO work_log (k, v) VALUES (?, ?)")) {
            s.setString(1, key);
            s.setString(2, value);
            s.executeUpdate();
        }
        return value;
    }

    /**
     * @return for each key of the prefix, its work rows' values, read once the checking node is part
     *     of the primary component again (after a kill under load, a survivor can leave it for a few
     *     seconds and refuses reads until it is back)
     */
    private Map<String, List<String>> executions(String prefix) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                return readExecutions(prefix);
            } catch (SQLException e) {
                if (!String.valueOf(e.getMessage()).contains("WSREP has not yet prepared node") || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(200);
            }
        }
    }

    private Map<String, List<String>> readExecutions(String prefix) throws SQLException {
        Map<String, List<String>> rows = new HashMap<>();
        try (Connection c = verify.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT k, v FROM work_log WHERE k LIKE ?")) {
            s.setString(1, prefix + "%");
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    rows.computeIfAbsent(rs.getString(1), k -> new ArrayList<>()).add(rs.getString(2));
                }
            }
        }
        return rows;
    }

    @Test
    @Order(1)
    void theSameKeyThroughTwoNodesAtOnceRunsOnceAndTheLoserReplaysAfterItsConflict() throws Exception {
        List<ManagedIdempotency<Connection>> clients = List.of(managed(0), managed(1));
        ExecutorService pool = Executors.newFixedThreadPool(2);
        String prefix = "race-" + run + "-";
        int replays = 0;
        try {
            for (int round = 0; round < RACES; round++) {
                String key = prefix + round;
                CyclicBarrier start = new CyclicBarrier(2);
                List<Future<Outcome<String>>> sent = new ArrayList<>();
                for (int node = 0; node < 2; node++) {
                    ManagedIdempotency<Connection> client = clients.get(node);
                    String name = "node" + (node + 1);
                    sent.add(pool.submit(() -> {
                        start.await(10, TimeUnit.SECONDS);
                        return client.execute(IdempotencyKey.of("galera", key), tx -> work(tx, key, name));
                    }));
                }
                Outcome<String> first = sent.get(0).get(60, TimeUnit.SECONDS);
                Outcome<String> second = sent.get(1).get(60, TimeUnit.SECONDS);
                assertThat(first.value()).as("both clients of %s are given the one execution's value", key).isEqualTo(second.value());
                assertThat(List.of(first.isReplay(), second.isReplay())).as(key).containsExactlyInAnyOrder(false, true);
                replays++;
            }
        } finally {
            pool.shutdownNow();
        }
        Map<String, List<String>> executions = executions(prefix);
        assertThat(executions).hasSize(RACES);
        executions.forEach((key, values) -> assertThat(values).as("executions of %s", key).hasSize(1));
        System.out.printf("[galera] %d keys sent through two nodes at once: %d replays, %d transactions retried after a conflict"
                + " (%d of them refused at COMMIT), every key executed once%n", RACES, replays, retries.get(), commitConflicts.get());
        assertThat(retries.get()).as("some races must have ended in a conflict that the runner retried").isPositive();
    }

    @Test
    @Order(2)
    void aCallerWithItsOwnTransactionGetsAFailureThatRetryableFailuresRecognises() throws Exception {
        Idempotency<Connection> engine = Idempotency.of(JdbcIdempotencyStore.ofDefaults());
        ExecutorService pool = Executors.newFixedThreadPool(2);
        String prefix = "own-" + run + "-";
        List<Exception> refused = new java.util.concurrent.CopyOnWriteArrayList<>();
        AtomicInteger atCommit = new AtomicInteger();
        try {
            for (int round = 0; round < RACES && refused.size() < 10; round++) {
                String key = prefix + round;
                CyclicBarrier start = new CyclicBarrier(2);
                List<Future<String>> sent = new ArrayList<>();
                for (int node = 0; node < 2; node++) {
                    DataSource dataSource = nodes.get(node);
                    String name = "node" + (node + 1);
                    sent.add(pool.submit(() -> {
                        start.await(10, TimeUnit.SECONDS);
                        for (int attempt = 0; ; attempt++) {
                            try (Connection c = dataSource.getConnection()) {
                                c.setAutoCommit(false);
                                boolean committing = false;
                                try {
                                    Outcome<String> outcome = engine.execute(IdempotencyKey.of("galera", key), c, () -> work(c, key, name));
                                    committing = true;
                                    c.commit();
                                    return outcome.value();
                                } catch (Exception e) {
                                    try {
                                        c.rollback();
                                    } catch (SQLException rollbackFailure) {
                                        // Galera reports a transaction it aborted for a replicated write on the next
                                        // statement, ROLLBACK included (1213): the transaction is gone either way.
                                        if (!RetryableFailures.isRetryable(rollbackFailure)) {
                                            e.addSuppressed(rollbackFailure);
                                            throw e;
                                        }
                                    }
                                    if (!RetryableFailures.isRetryable(e) || attempt == 9) {
                                        throw e;
                                    }
                                    refused.add(e);
                                    if (committing) {
                                        atCommit.incrementAndGet();
                                    }
                                }
                            }
                        }
                    }));
                }
                assertThat(sent.get(0).get(60, TimeUnit.SECONDS)).as(key).isEqualTo(sent.get(1).get(60, TimeUnit.SECONDS));
            }
        } finally {
            pool.shutdownNow();
        }
        executions(prefix).forEach((key, values) -> assertThat(values).as("executions of %s", key).hasSize(1));
        System.out.printf("[galera] own transactions: %d refused and retried by the caller (%d at COMMIT), each retry replayed%n",
                refused.size(), atCommit.get());
        assertThat(refused).as("some races must have ended in a refused transaction").isNotEmpty();
        assertThat(refused).allSatisfy(e -> assertThat(RetryableFailures.isRetryable(e)).isTrue());
    }

    @Test
    @Order(3)
    void aNodeKilledUnderLoadLosesNoAcknowledgedKeyAndRunsNoKeyTwice() throws Exception {
        List<ManagedIdempotency<Connection>> clients = List.of(managed(0), managed(1), managed(2));
        String prefix = "kill-" + run;
        AtomicInteger next = new AtomicInteger();
        ThreadLocal<Integer> home = ThreadLocal.withInitial(() -> next.getAndIncrement() % 3);
        KeyedLoad load = new KeyedLoad(prefix, 6, (key, attempt) -> {
            int node = (home.get() + attempt) % 3; // after a failure the client tries the next node
            return clients.get(node).execute(IdempotencyKey.of("galera", key), tx -> work(tx, key, "node" + (node + 1)));
        }).start();
        Thread.sleep(2_000);
        int before = load.acknowledged().size();
        long killedAt = System.nanoTime();
        Cluster.control("galera-kill", "3");
        Thread.sleep(9_000);
        long stoppedAt = System.nanoTime();
        load.stop();
        long stall = load.longestPauseMillis(killedAt, stoppedAt);
        int after = load.acknowledged().size() - before;

        Map<String, List<String>> executions = executions(prefix);
        load.acknowledged().values().forEach(ack -> assertThat(executions.get(ack.key()))
                .as("the acknowledged key %s ran once, with the value its client was given", ack.key()).containsExactly(ack.value()));
        executions.forEach((key, values) -> assertThat(values).as("executions of %s", key).hasSize(1));
        for (KeyedLoad.Ack ack : load.acknowledged().values().stream().limit(100).toList()) {
            Outcome<String> again = clients.get(1).execute(IdempotencyKey.of("galera", ack.key()), tx -> work(tx, ack.key(), "again"));
            assertThat(again.isReplay()).as(ack.key()).isTrue();
            assertThat(again.value()).isEqualTo(ack.value());
        }
        assertThat(after).as("the surviving nodes went on").isPositive();

        long rejoinStart = System.nanoTime();
        Cluster.control("galera-rejoin", "3");
        long rejoin = (System.nanoTime() - rejoinStart) / 1_000_000;
        try (HikariDataSource third = Cluster.pool(Cluster.galeraUrls().get(2), "IDEMPOTENCY_GALERA", 1,
                Map.of("sessionVariables", "wsrep_sync_wait=1"));
             Connection c = third.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT COUNT(*) FROM work_log WHERE k LIKE ?")) {
            s.setString(1, prefix + "%");
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                assertThat(rs.getInt(1)).as("the rejoined node has every execution").isEqualTo(executions.size());
            }
        }
        System.out.printf("[galera] node 3 SIGKILLed under load (6 clients): %d keys acknowledged before, %d after; longest time"
                        + " without an acknowledgement %d ms; %d attempts failed and were sent again (%s); %d keys abandoned unanswered"
                        + " at the end (each ran at most once); rejoin by IST %d ms; no acknowledged key lost, none run twice%n",
                before, after, stall, load.failedAttempts(), load.failureKinds(), load.abandoned().size(), rejoin);
    }
}
