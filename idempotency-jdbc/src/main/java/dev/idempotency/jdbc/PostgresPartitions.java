package dev.idempotency.jdbc;

import dev.idempotency.jdbc.dialect.PartitionedPostgresDialect;
import dev.idempotency.jdbc.dialect.TableName;
import dev.idempotency.jdbc.internal.Partitions;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * The day partitions of the PostgreSQL record table partitioned by expiry day
 * ({@link PartitionedPostgresDialect}): created ahead of time, for every day a new record can expire
 * in, from a daily job, and dropped once their day has ended. Both run DDL; each takes a short
 * exclusive lock on the table.
 *
 * <p>Stateless and thread-safe.
 */
public final class PostgresPartitions {

    private PostgresPartitions() {
    }

    /**
     * Creates the day partitions that are missing, from the UTC day of {@code from} to that of
     * {@code to}, both included. Run it daily, with {@code to} at least the retention plus one day
     * ahead of now.
     *
     * @param c a connection (its transaction, if any, is the caller's to commit)
     * @param table the record table, created with {@link PartitionedPostgresDialect}'s DDL
     * @param from the first day's instant
     * @param to the last day's instant, not before {@code from}
     * @return the partitions created
     * @throws SQLException if a statement fails (a day partition over rows of the default partition, for one)
     * @throws IllegalArgumentException if {@code to} is before {@code from}, or the range exceeds 3660 days
     */
    public static List<String> create(Connection c, TableName table, Instant from, Instant to) throws SQLException {
        return Partitions.create(c, table, from, to);
    }

    /**
     * Drops every day partition whose whole day lies before {@code now}. Each drop waits at most
     * {@code lockTimeout} for the table's lock; if one waits longer, this stops there and returns
     * what it dropped, and the transaction is aborted (roll it back, run it again later).
     *
     * @param c a connection in a transaction (the caller commits)
     * @param table the record table, created with {@link PartitionedPostgresDialect}'s DDL
     * @param now the current time
     * @param lockTimeout how long each drop may wait for the table's lock, at least one millisecond
     * @return the partitions dropped
     * @throws SQLException if a statement fails
     */
    public static List<String> dropExpired(Connection c, TableName table, Instant now, Duration lockTimeout) throws SQLException {
        return Partitions.dropExpired(c, table, now, lockTimeout);
    }
}
