package dev.idempotency.faults;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.KeyPolicy;
import dev.idempotency.Outcome;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * A client of the workload: runs the keyed operation ({@link Workload}) in transactions of its own
 * and writes every attempt and its answer to its {@link History} before it goes on. The same class
 * runs as a thread of a test and as a child JVM that a test kills ({@link #main}).
 *
 * <p>An attempt: take a connection, begin, {@code execute} (claim, work, record), commit, and write
 * down what the client was told. {@link Faults} are called at each step of the protocol, so that a
 * test can cut the connection there.
 *
 * <p>Thread-safe: one client may run attempts on several threads (they share the history).
 */
final class FaultClient {

    /** The steps of one attempt where a fault can be injected. */
    enum Step {
        /** The transaction is open and has run a statement; nothing of the key's is read yet. */
        BEFORE_CLAIM,
        /** The key is claimed in the transaction; the work starts. */
        AFTER_CLAIM,
        /** The work has written its business row; its result is not recorded yet. */
        DURING_WORK,
        /** {@code execute} returned: the result is recorded, not committed. */
        AFTER_COMPLETION,
        /** {@code commit()} is about to be called: a fault armed here lands while the COMMIT is on its way. */
        COMMIT
    }

    /** Injects a fault at a step of an attempt, or does nothing. */
    @FunctionalInterface
    interface Faults {
        Faults NONE = (step, key, c) -> { };

        void at(Step step, String key, Connection c) throws Exception;
    }

    private final String name;
    private final DataSource ds;
    private final Idempotency<Connection> idem;
    private final History history;
    private final String scope;
    private final Faults faults;
    private final AtomicLong executions = new AtomicLong();
    private final List<Exception> failures = new CopyOnWriteArrayList<>();

    FaultClient(String name, DataSource ds, JdbcIdempotencyStore store, KeyPolicy policy, History history, String scope, Faults faults) {
        this.name = name;
        this.ds = ds;
        this.idem = Idempotency.builder(store).keyPolicy(policy).build();
        this.history = history;
        this.scope = scope;
        this.faults = faults;
    }

    /**
     * One attempt, written down: {@code INVOKE}, then {@code ACK}, {@code BUSY} or {@code FAIL}.
     *
     * @return whether the client got its answer (an {@code ACK})
     */
    boolean attempt(String key) {
        history.record(HistoryEvent.invoke(name, key));
        Connection c = null;
        try {
            c = ds.getConnection();
            c.setAutoCommit(false);
            Connection tx = c;
            faults.at(Step.BEFORE_CLAIM, key, tx);
            Outcome<String> outcome = idem.execute(IdempotencyKey.of(scope, key), tx, () -> {
                faults.at(Step.AFTER_CLAIM, key, tx);
                String value = name + "-" + executions.incrementAndGet();
                Workload.insertEffect(tx, scope, key, value);
                faults.at(Step.DURING_WORK, key, tx);
                return value;
            });
            if (outcome instanceof Outcome.InProgress<String>) {
                tx.rollback();
                history.record(HistoryEvent.busy(name, key));
                return false;
            }
            if (!outcome.hasValue()) {
                throw new IllegalStateException("an outcome the workload cannot produce: " + outcome);
            }
            faults.at(Step.AFTER_COMPLETION, key, tx);
            faults.at(Step.COMMIT, key, tx);
            tx.commit();
            history.record(HistoryEvent.ack(name, key, outcome.isExecuted(), outcome.value()));
            return true;
        } catch (Exception e) {
            rollbackQuietly(c);
            if (failures.size() < 100) {
                failures.add(e);
            }
            history.record(HistoryEvent.fail(name, key, e));
            return false;
        } finally {
            closeQuietly(c);
        }
    }

    /** @return the first hundred exceptions this client's attempts ended with, for their messages */
    List<Exception> failures() {
        return List.copyOf(failures);
    }

    /** Attempts {@code key} until the client is answered, pausing a little between attempts. */
    void untilAnswered(String key, Duration patience) throws InterruptedException {
        long deadline = System.nanoTime() + patience.toNanos();
        while (!attempt(key)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("key " + key + " got no answer within " + patience + " (client " + name + ")",
                        failures.isEmpty() ? null : failures.get(failures.size() - 1));
            }
            Thread.sleep(ThreadLocalRandom.current().nextInt(5, 50));
        }
    }

    private static void rollbackQuietly(Connection c) {
        if (c == null) {
            return;
        }
        try {
            c.rollback();
        } catch (SQLException ignored) {
            // the connection may be gone with the fault
        }
    }

    private static void closeQuietly(Connection c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (SQLException ignored) {
            // the connection may be gone with the fault
        }
    }

    static String key(int i) {
        return "k" + i;
    }

    /**
     * The child JVM that {@code ClientKillTest} kills: runs attempts on random keys of a small, shared
     * key space from several threads until it is killed. Prints {@code ready} once its first attempt
     * has ended, so that the test's kill lands among attempts rather than in the JVM's start-up.
     *
     * <p>Arguments: JDBC URL, user ({@code -} for none), password, client name, history file, key
     * scope, number of keys, threads.
     */
    public static void main(String[] args) throws Exception {
        String user = "-".equals(args[1]) ? null : args[1];
        FaultDatabase db = new FaultDatabase("child", args[0], user, user == null ? null : args[2], true);
        String name = args[3];
        int keys = Integer.parseInt(args[6]);
        int threads = Integer.parseInt(args[7]);
        try (HikariDataSource ds = db.pool(threads); History history = History.append(Path.of(args[4]))) {
            ds.getConnection().close();
            FaultClient client = new FaultClient(name, ds, JdbcIdempotencyStore.ofDefaults(), KeyPolicy.ofDefaults(), history, args[5],
                    Faults.NONE);
            AtomicBoolean working = new AtomicBoolean();
            Thread[] workers = new Thread[threads];
            for (int t = 0; t < threads; t++) {
                workers[t] = new Thread(() -> {
                    while (true) {
                        client.attempt(key(ThreadLocalRandom.current().nextInt(keys)));
                        if (working.compareAndSet(false, true)) {
                            // Warm: from now on a kill lands among attempts, not in the JVM's start-up.
                            System.out.println("ready");
                            System.out.flush();
                        }
                    }
                }, name + "-" + t);
                workers[t].start();
            }
            for (Thread w : workers) {
                w.join();
            }
        }
    }
}
