package dev.idempotency.testsupport;

import com.zaxxer.hikari.HikariDataSource;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * A pool opened when a test first needs it, so that a test class on a server that is absent is
 * skipped (or fails under CI) in its tests rather than when it is constructed, and closed once by
 * the class. Not thread-safe: open it from the test thread.
 */
public final class LazyPool implements AutoCloseable {

    private final Supplier<? extends HikariDataSource> open;
    private HikariDataSource pool;

    /** @param open opens the pool, when {@link #get()} is first called */
    public LazyPool(Supplier<? extends HikariDataSource> open) {
        this.open = Objects.requireNonNull(open, "open");
    }

    /** @return the pool, opened now if it is not yet */
    public HikariDataSource get() {
        if (pool == null) {
            pool = open.get();
        }
        return pool;
    }

    /** Closes the pool if it was opened. */
    @Override
    public void close() {
        if (pool != null) {
            pool.close();
        }
    }
}
