package dev.idempotency.benchmarks;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.Outcome;
import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One transaction at a time: a plain business insert, the same insert through the library with a
 * fresh key, and a replay of a recorded key (the work does not run). Each borrows a pooled
 * connection, runs and commits. Their times are comparable within one run: the report gives the
 * ratios to the baseline. Beside them, in the same run: the library in the mode where it runs the
 * transaction itself; a realistic business change (an inventory reservation) with and without the
 * library; and the peers a user would pick instead ({@link Peers}), each marking the key in a
 * transaction of its own before the baseline's business transaction, with a fresh key and with a
 * duplicate. And write-last mode ({@code ManagedIdempotency.writeLast}), first and replay.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(1)
public class TransactionBenchmark {

    /** Keys recorded before the run by default, replayed in turn. */
    static final int RECORDED = 1000;

    /** The database, as in {@code Database.id()}. */
    @Param({"h2mem", "h2file", "sqlite", "postgresql", "mariadb"})
    public String db;

    /** Keys recorded before the run (by the library and by each peer), replayed in turn; fewer for a smoke run. */
    @Param({"" + RECORDED})
    public int recorded;

    private Fixture fixture;

    /** Opens the database and records the keys to replay. @throws SQLException if it fails */
    @Setup(Level.Trial)
    public void open() throws SQLException {
        fixture = Fixture.open(Database.byId(db));
        fixture.recordKeys(recorded);
    }

    /** Closes the pool. */
    @TearDown(Level.Trial)
    public void close() {
        fixture.close();
    }

    /** A thread's turn through the recorded keys. */
    @State(Scope.Thread)
    public static class Recorded {
        private int next;

        IdempotencyKey next(int recorded) {
            IdempotencyKey key = Fixture.recordedKey(next);
            next = (next + 1) % recorded;
            return key;
        }
    }

    /** @return the order id @throws SQLException if it fails */
    @Benchmark
    public long baseline() throws SQLException {
        return fixture.baseline();
    }

    /** @return the outcome, {@code Executed} @throws SQLException if it fails */
    @Benchmark
    public Outcome<Long> firstExecution() throws SQLException {
        return fixture.firstExecution();
    }

    /** @param keys the next key @return the outcome, {@code Replayed} @throws SQLException if it fails */
    @Benchmark
    public Outcome<Long> replay(Recorded keys) throws SQLException {
        return fixture.replay(keys.next(recorded));
    }

    /** @return the outcome, {@code Executed}, in a transaction the library runs @throws SQLException if it fails */
    @Benchmark
    public Outcome<Long> managedFirstExecution() throws SQLException {
        return fixture.managedFirstExecution();
    }

    /**
     * @param keys the next key
     * @return the outcome, {@code Replayed}, in a transaction the library runs
     * @throws SQLException if it fails
     */
    @Benchmark
    public Outcome<Long> managedReplay(Recorded keys) throws SQLException {
        return fixture.managedReplay(keys.next(recorded));
    }

    /** @return the reservation's id @throws SQLException if it fails */
    @Benchmark
    public long reservationBaseline() throws SQLException {
        return fixture.reservationBaseline();
    }

    /** @return the outcome, {@code Executed} @throws SQLException if it fails */
    @Benchmark
    public Outcome<Long> reservationFirstExecution() throws SQLException {
        return fixture.reservationFirstExecution();
    }

    /** @return the order id @throws SQLException if it fails */
    @Benchmark
    public long springFirst() throws SQLException {
        return fixture.peerFirst(Peers.Peer.SPRING);
    }

    /** @param keys the next key */
    @Benchmark
    public void springDuplicate(Recorded keys) {
        fixture.peerDuplicate(Peers.Peer.SPRING, keys.next(recorded));
    }

    /** @return the order id @throws SQLException if it fails */
    @Benchmark
    public long camelFirst() throws SQLException {
        return fixture.peerFirst(Peers.Peer.CAMEL);
    }

    /** @param keys the next key */
    @Benchmark
    public void camelDuplicate(Recorded keys) {
        fixture.peerDuplicate(Peers.Peer.CAMEL, keys.next(recorded));
    }

    /** @return the outcome, {@code Executed}, in write-last mode @throws SQLException if it fails */
    @Benchmark
    public Outcome<Long> writeLastFirst() throws SQLException {
        return fixture.writeLastFirst();
    }

    /**
     * @param keys the next key
     * @return the outcome, {@code Replayed}, in write-last mode (the work ran and was rolled back)
     * @throws SQLException if it fails
     */
    @Benchmark
    public Outcome<Long> writeLastReplay(Recorded keys) throws SQLException {
        return fixture.writeLastReplay(keys.next(recorded));
    }
}
