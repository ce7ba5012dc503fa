package dev.idempotency.jdbc.internal;

import dev.idempotency.jdbc.dialect.TableName;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The day partitions of the PostgreSQL record table partitioned by expiry day
 * ({@code PartitionedPostgresDialect}): their creation ahead of time and the drop of the days that
 * have ended. Stateless and thread-safe.
 */
public final class Partitions {

    private static final DateTimeFormatter DAY = DateTimeFormatter.ofPattern("yyyyMMdd");
    private static final Pattern PARTITION = Pattern.compile("_p(\\d{8})$");

    private Partitions() {
    }

    /**
     * Creates the day partitions that are missing, from the UTC day of {@code from} to that of
     * {@code to}, both included. Run it daily, with {@code to} at least the retention plus one day
     * ahead of now.
     *
     * @param c a connection (its transaction, if any, is the caller's to commit)
     * @param table the record table, created with this dialect's DDL
     * @param from the first day's instant
     * @param to the last day's instant, not before {@code from}
     * @return the partitions created
     * @throws SQLException if a statement fails (a day partition over rows of the default partition, for one)
     * @throws IllegalArgumentException if {@code to} is before {@code from}, or the range exceeds 3660 days
     */
    public static List<String> create(Connection c, TableName table, Instant from, Instant to) throws SQLException {
        LocalDate first = LocalDate.ofInstant(Objects.requireNonNull(from, "from"), ZoneOffset.UTC);
        LocalDate last = LocalDate.ofInstant(Objects.requireNonNull(to, "to"), ZoneOffset.UTC);
        if (last.isBefore(first) || first.plusDays(3660).isBefore(last)) {
            throw new IllegalArgumentException("partitions from " + first + " to " + last + ": 'to' must be within 3660 days after 'from'");
        }
        List<String> existing = partitions(c, table);
        List<String> created = new ArrayList<>();
        try (Statement s = c.createStatement()) {
            for (LocalDate day = first; !day.isAfter(last); day = day.plusDays(1)) {
                String name = partitionName(table, "p" + DAY.format(day));
                if (existing.contains(unquoted(name))) {
                    continue;
                }
                long start = day.atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
                long end = day.plusDays(1).atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
                s.execute("CREATE TABLE IF NOT EXISTS " + name + " PARTITION OF " + table + " FOR VALUES FROM (" + start + ") TO (" + end + ")");
                created.add(unquoted(name));
            }
        }
        return created;
    }

    /**
     * Drops every day partition whose whole day lies before {@code now}: all its records have
     * expired. Each drop waits at most {@code lockTimeout} for the transactions that use the table
     * (it takes an exclusive lock on it for a moment); if one waits longer, this stops there and
     * returns what it dropped, and the transaction is aborted (roll it back, run it again later).
     *
     * @param c a connection in a transaction (the caller commits)
     * @param table the record table, created with this dialect's DDL
     * @param now the current time
     * @param lockTimeout how long each drop may wait for the table's lock, at least one millisecond
     * @return the partitions dropped
     * @throws SQLException if a statement fails
     */
    public static List<String> dropExpired(Connection c, TableName table, Instant now, Duration lockTimeout) throws SQLException {
        Objects.requireNonNull(now, "now");
        if (lockTimeout.toMillis() < 1) {
            throw new IllegalArgumentException("lockTimeout must be at least 1 ms, was " + lockTimeout);
        }
        List<String> dropped = new ArrayList<>();
        try (Statement s = c.createStatement()) {
            s.execute("SET LOCAL lock_timeout = " + lockTimeout.toMillis());
            for (String partition : partitions(c, table)) {
                Matcher m = PARTITION.matcher(partition);
                if (!m.find()) {
                    continue; // the default partition, or one the application made
                }
                LocalDate day = LocalDate.parse(m.group(1), DAY);
                if (!day.plusDays(1).atStartOfDay(ZoneOffset.UTC).toInstant().isAfter(now)) {
                    try {
                        s.execute("DROP TABLE " + partitionName(table, "p" + m.group(1)));
                    } catch (SQLException e) {
                        if ("55P03".equals(e.getSQLState())) {
                            return dropped;
                        }
                        throw e;
                    }
                    dropped.add(partition);
                }
            }
        }
        return dropped;
    }

    /** @return the names (unquoted, without schema) of the table's partitions */
    private static List<String> partitions(Connection c, TableName table) throws SQLException {
        List<String> names = new ArrayList<>();
        try (PreparedStatement s = c.prepareStatement("SELECT p.relname FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhrelid"
                + " WHERE i.inhparent = CAST(? AS regclass) ORDER BY p.relname")) {
            s.setString(1, table.qualified());
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    names.add(rs.getString(1));
                }
            }
        }
        return names;
    }

    /**
     * @param table the record table
     * @param suffix the partition's suffix
     * @return the partition's name, in the table's schema; table names are plain identifiers, never quoted
     */
    public static String partitionName(TableName table, String suffix) {
        String name = table.simpleName() + "_" + suffix;
        if (name.length() > 63) {
            throw new IllegalArgumentException("the partition name '" + name + "' is longer than PostgreSQL's 63 characters;"
                    + " a table partitioned by expiry day takes a name of at most 53 characters");
        }
        return table.schema().map(schema -> schema + "." + name).orElse(name);
    }

    private static String unquoted(String qualifiedName) {
        return qualifiedName.substring(qualifiedName.lastIndexOf('.') + 1).toLowerCase(java.util.Locale.ROOT);
    }
}
