package dev.idempotency.faults;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Fingerprint;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.KeyPolicy;
import dev.idempotency.LeasedIdempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.Phases;
import dev.idempotency.ResultCodec;
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
import java.util.function.BiFunction;
import java.util.function.Function;
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

    /**
     * What one attempt does, up to the commit of its outcome: the transactional protocol in a
     * transaction of the client's own, a leased operation in phases, or a chunk of keys. An
     * {@code InProgress} outcome leaves nothing committed.
     */
    @FunctionalInterface
    interface Operation {
        /**
         * @param keys the keys of the attempt: one, or a chunk's
         * @return one outcome per key, in order, each committed (or rolled back if {@code InProgress})
         */
        List<Outcome<String>> run(List<String> keys) throws Exception;
    }

    private final String name;
    private final History history;
    private final AtomicLong executions = new AtomicLong();
    private final List<Exception> failures = new CopyOnWriteArrayList<>();
    private final Operation operation;

    /** A client of the transactional mode: {@code execute} in a transaction it begins and commits itself, with {@code faults} at each step. */
    FaultClient(String name, DataSource ds, JdbcIdempotencyStore store, KeyPolicy policy, History history, String scope, Faults faults) {
        this.name = name;
        this.history = history;
        Idempotency<Connection> idem = Idempotency.builder(store).keyPolicy(policy).build();
        this.operation = keys -> List.of(transactional(ds, idem, scope, faults, keys.get(0)));
    }

    /** A client whose attempts run {@code operation}, given the client's next unique value of an execution. */
    private FaultClient(String name, History history, Function<FaultClient, Operation> operation) {
        this.name = name;
        this.history = history;
        this.operation = operation.apply(this);
    }

    /**
     * @param phases the leased operation of a key, given the client (for {@link #nextValue()}) and the key
     * @return a client of lease mode: each attempt runs the key's phases under a lease with {@code managed}
     */
    static <C> FaultClient leased(String name, LeasedIdempotency<C> managed, History history, String scope,
                                  BiFunction<FaultClient, String, Phases<C, String, Exception>> phases) {
        return new FaultClient(name, history, client -> keys -> List.of(
                managed.run(IdempotencyKey.of(scope, keys.get(0)), phases.apply(client, keys.get(0)))));
    }

    /** @return a client of batch chunks: each attempt runs its keys as one chunk ({@code executeChunk}), the work one business row per key */
    static FaultClient chunks(String name, ManagedIdempotency<Connection> managed, History history, String scope) {
        return new FaultClient(name, history, client -> keys -> managed.executeChunk(keys,
                k -> IdempotentCall.of(IdempotencyKey.of(scope, k), ResultCodec.string()), (tx, k) -> {
                    String value = client.nextValue();
                    Workload.insertEffect(tx, scope, k, value);
                    return value;
                }));
    }

    /** @return a value no other execution of any client of the run has: the client's name and a counter */
    String nextValue() {
        return name + "-" + executions.incrementAndGet();
    }

    /**
     * One attempt, written down: {@code INVOKE}, then {@code ACK}, {@code BUSY} or {@code FAIL}.
     *
     * @return whether the client got its answer (an {@code ACK})
     */
    boolean attempt(String key) {
        return attempt(List.of(key));
    }

    /**
     * One attempt on several keys at once (a chunk), written down key by key: an {@code INVOKE} each,
     * then each key's answer, or a {@code FAIL} each if the attempt failed.
     *
     * @return whether every key got its answer
     */
    boolean attempt(List<String> keys) {
        for (String key : keys) {
            history.record(HistoryEvent.invoke(name, key));
        }
        List<Outcome<String>> outcomes;
        try {
            outcomes = operation.run(keys);
            if (outcomes.size() != keys.size()) {
                throw new IllegalStateException(outcomes.size() + " outcomes for " + keys.size() + " keys");
            }
        } catch (Exception e) {
            if (failures.size() < 100) {
                failures.add(e);
            }
            for (String key : keys) {
                history.record(HistoryEvent.fail(name, key, e));
            }
            return false;
        }
        boolean answered = true;
        for (int i = 0; i < keys.size(); i++) {
            Outcome<String> outcome = outcomes.get(i);
            if (outcome instanceof Outcome.InProgress<String>) {
                history.record(HistoryEvent.busy(name, keys.get(i)));
                answered = false;
            } else if (outcome.hasValue()) {
                history.record(HistoryEvent.ack(name, keys.get(i), outcome.isExecuted(), outcome.value()));
            } else {
                // Not an exception: an outcome the workload cannot produce is a violation, not an expected failure.
                history.record(new HistoryEvent(name, HistoryEvent.Type.FAIL, keys.get(i), "unexpected outcome " + outcome.status()));
                answered = false;
            }
        }
        return answered;
    }

    /** The transactional protocol with a fault hook at each step; commits, or rolls back an {@code InProgress}. */
    private Outcome<String> transactional(DataSource ds, Idempotency<Connection> idem, String scope, Faults faults, String key)
            throws Exception {
        Connection c = null;
        try {
            c = ds.getConnection();
            c.setAutoCommit(false);
            Connection tx = c;
            faults.at(Step.BEFORE_CLAIM, key, tx);
            Outcome<String> outcome = idem.execute(IdempotencyKey.of(scope, key), tx, () -> {
                faults.at(Step.AFTER_CLAIM, key, tx);
                String value = nextValue();
                Workload.insertEffect(tx, scope, key, value);
                faults.at(Step.DURING_WORK, key, tx);
                return value;
            });
            if (outcome instanceof Outcome.InProgress<String>) {
                tx.rollback();
                return outcome;
            }
            faults.at(Step.AFTER_COMPLETION, key, tx);
            faults.at(Step.COMMIT, key, tx);
            tx.commit();
            return outcome;
        } catch (Exception e) {
            rollbackQuietly(c);
            throw e;
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

    /** The workloads a child JVM runs ({@link #main}). */
    enum Mode {
        /** The transactional mode: {@code execute} in the client's own transaction. */
        TRANSACTIONAL,
        /** Lease mode with phases ({@link LeaseWorkload}): prepare, an external call keyed by the downstream key, finish. */
        LEASE,
        /** Batch chunks of {@value #CHUNK} random keys ({@code executeChunk}). */
        CHUNK
    }

    /** Keys per chunk of {@link Mode#CHUNK}. */
    static final int CHUNK = 8;

    /**
     * @param mode the workload, {@code TRANSACTIONAL} or {@code CHUNK} (lease mode's clients come from its store: {@link LeaseStore.Opened#clients})
     * @param ds the clients' pool
     * @param scope the run's key scope
     * @param lease the lease of the chunks' engine
     * @return a factory of the clients of {@code mode}
     */
    static Factory factory(Mode mode, DataSource ds, String scope, Duration lease) {
        JdbcIdempotencyStore store = JdbcIdempotencyStore.ofDefaults();
        return switch (mode) {
            case TRANSACTIONAL -> (name, history) -> new FaultClient(name, ds, store, KeyPolicy.ofDefaults(), history, scope, Faults.NONE);
            case LEASE -> throw new IllegalArgumentException("lease mode's clients come from its store (LeaseStore.Opened.clients)");
            case CHUNK -> (name, history) -> chunks(name, LeaseWorkload.managed(ds, store), history, scope);
        };
    }

    /** Makes a client of one workload. */
    @FunctionalInterface
    interface Factory {
        FaultClient client(String name, History history);
    }

    /**
     * The child JVM that the kill tests kill: runs attempts of its {@link Mode} on random keys of a
     * small, shared key space from several threads until it is killed. Prints {@code ready} once its
     * first attempt has ended, so that the test's kill lands among attempts rather than in the JVM's
     * start-up.
     *
     * <p>Arguments: mode, the store's address (a JDBC URL; in lease mode also another store's, {@link LeaseStore#at}), user ({@code -} for none), password, client name, history file,
     * key scope, number of keys, threads, the run's folder, the lease in milliseconds.
     */
    public static void main(String[] args) throws Exception {
        Mode mode = Mode.valueOf(args[0]);
        String user = "-".equals(args[2]) ? null : args[2];
        String password = user == null ? null : args[3];
        String name = args[4];
        int keys = Integer.parseInt(args[7]);
        int threads = Integer.parseInt(args[8]);
        Duration lease = Duration.ofMillis(Long.parseLong(args[10]));
        HikariDataSource ds = null;
        LeaseStore.Opened leaseStore = null;
        Factory factory;
        if (mode == Mode.LEASE) {
            leaseStore = LeaseStore.at(args[1], user, password).open(threads);
            factory = leaseStore.clients(args[6], Path.of(args[9]), lease);
        } else {
            ds = new FaultDatabase("child", args[1], user, password, true).pool(threads);
            ds.getConnection().close();
            factory = factory(mode, ds, args[6], lease);
        }
        try (History history = History.append(Path.of(args[5]))) {
            FaultClient client = factory.client(name, history);
            AtomicBoolean working = new AtomicBoolean();
            Thread[] workers = new Thread[threads];
            for (int t = 0; t < threads; t++) {
                workers[t] = new Thread(() -> {
                    while (true) {
                        if (mode == Mode.CHUNK) {
                            client.attempt(ThreadLocalRandom.current().ints(0, keys).distinct().limit(Math.min(CHUNK, keys))
                                    .mapToObj(FaultClient::key).toList());
                        } else {
                            client.attempt(key(ThreadLocalRandom.current().nextInt(keys)));
                        }
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
        } finally {
            if (ds != null) {
                ds.close();
            }
            if (leaseStore != null) {
                leaseStore.close();
            }
        }
    }
}
