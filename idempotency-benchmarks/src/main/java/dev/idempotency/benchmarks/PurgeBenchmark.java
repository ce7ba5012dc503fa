package dev.idempotency.benchmarks;

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
 * Purging: before each iteration, {@code rows} expired records are inserted (batched, untimed) and
 * the clock is moved past their expiry; the timed operation deletes them all with
 * {@code purgeExpired(tx, batch)} in a loop of short transactions. The report divides
 * {@code rows} by the time: rows removed per second.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 1)
@Measurement(iterations = 3)
@Fork(1)
public class PurgeBenchmark {

    /** The database, as in {@code Database.id()}. */
    @Param({"h2mem", "h2file", "sqlite", "postgresql", "mariadb"})
    public String db;

    /** Expired records to remove per iteration. */
    @Param("100000")
    public int rows;

    /** The limit of one purge transaction. */
    @Param("1000")
    public int batch;

    private Fixture fixture;

    /** Opens the database. */
    @Setup(Level.Trial)
    public void open() {
        fixture = Fixture.open(Database.byId(db));
    }

    /** Inserts the expired records. @throws SQLException if it fails */
    @Setup(Level.Iteration)
    public void fill() throws SQLException {
        fixture.insertExpired(rows);
    }

    /** Closes the pool. */
    @TearDown(Level.Trial)
    public void close() {
        fixture.close();
    }

    /** @return the rows removed @throws SQLException if it fails */
    @Benchmark
    public long purgeAll() throws SQLException {
        long removed = fixture.purgeAll(batch);
        if (removed != rows) {
            throw new IllegalStateException("purged " + removed + " rows, expected " + rows);
        }
        return removed;
    }
}
