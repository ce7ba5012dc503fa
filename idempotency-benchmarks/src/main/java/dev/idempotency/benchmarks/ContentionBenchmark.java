package dev.idempotency.benchmarks;

import dev.idempotency.Outcome;
import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@value Database#THREADS} threads at once: plain transactions (the baseline), the library on
 * distinct fresh keys, and the library on a hot key, where every {@value Database#THREADS}
 * consecutive attempts share one key: one of them runs the work, the others wait for it and
 * replay its result. Throughput in transactions per second; a transaction that fails with a
 * conflict is retried whole, as a client would, and counted.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(Database.THREADS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(1)
public class ContentionBenchmark {

    /** The database, as in {@code Database.id()}. */
    @Param({"h2mem", "h2file", "sqlite", "postgresql", "mariadb"})
    public String db;

    private Fixture fixture;

    /** Opens the database. */
    @Setup(Level.Trial)
    public void open() {
        fixture = Fixture.open(Database.byId(db));
    }

    /** Closes the pool. */
    @TearDown(Level.Trial)
    public void close() {
        fixture.close();
    }

    /** What a thread's attempts on the hot key came to, reported next to the throughput. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class HotKeyOutcomes {
        private final Fixture.Tally tally = new Fixture.Tally();

        /** Starts each iteration's count at zero. */
        @Setup(Level.Iteration)
        public void reset() {
            tally.executed = 0;
            tally.replayed = 0;
            tally.inProgress = 0;
            tally.retries = 0;
        }

        /** @return attempts that ran the work */
        public long executed() {
            return tally.executed;
        }

        /** @return attempts that replayed */
        public long replayed() {
            return tally.replayed;
        }

        /** @return attempts that gave up waiting */
        public long inProgress() {
            return tally.inProgress;
        }

        /** @return transactions retried after a conflict or a store failure */
        public long retries() {
            return tally.retries;
        }
    }

    /** @return the order id @throws SQLException if it fails */
    @Benchmark
    public long baseline() throws SQLException {
        return fixture.baseline();
    }

    /** @return the outcome @throws SQLException if it fails */
    @Benchmark
    public Outcome<Long> distinctKeys() throws SQLException {
        return fixture.firstExecution();
    }

    /** @param outcomes this thread's count @return the outcome @throws SQLException if it fails */
    @Benchmark
    public Outcome<Long> hotKey(HotKeyOutcomes outcomes) throws SQLException {
        return fixture.executeRetrying(fixture.hotKey(), outcomes.tally);
    }
}
