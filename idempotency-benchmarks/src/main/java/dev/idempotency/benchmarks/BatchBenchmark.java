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
 * A batch job of {@code items} new items in chunks of {@code chunk}, one transaction per chunk,
 * each item writing one business row (sent as one JDBC batch per chunk): the rows alone (the
 * baseline), one {@code Idempotency.execute} per item, and one {@code executeChunk} per chunk.
 * Before each iteration (untimed) both tables are dropped and created again, so that every
 * iteration starts from empty tables. The report divides {@code items} by the time: items per
 * second.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 1)
@Measurement(iterations = 2)
@Fork(1)
public class BatchBenchmark {

    /** The database, as in {@code Database.id()}. */
    @Param({"h2mem", "h2file", "sqlite", "postgresql", "mariadb"})
    public String db;

    /** Items of the job. */
    @Param("100000")
    public int items;

    /** Items per chunk (per transaction). */
    @Param("500")
    public int chunk;

    private Fixture fixture;

    /** Opens the database. */
    @Setup(Level.Trial)
    public void open() {
        fixture = Fixture.open(Database.byId(db));
    }

    /** Empties the tables. @throws SQLException if it fails */
    @Setup(Level.Iteration)
    public void reset() throws SQLException {
        fixture.resetTables();
    }

    /** Closes the pool. */
    @TearDown(Level.Trial)
    public void close() {
        fixture.close();
    }

    /** @return the items run @throws SQLException if it fails */
    @Benchmark
    public long baseline() throws SQLException {
        return fixture.batchBaseline(items, chunk);
    }

    /** @return the items run @throws SQLException if it fails */
    @Benchmark
    public long perItemExecute() throws SQLException {
        return fixture.batchPerItem(items, chunk);
    }

    /** @return the items run @throws SQLException if it fails */
    @Benchmark
    public long chunkApi() throws SQLException {
        return fixture.batchChunk(items, chunk);
    }
}
