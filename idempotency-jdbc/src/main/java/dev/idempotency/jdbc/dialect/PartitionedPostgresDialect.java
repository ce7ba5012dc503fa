package dev.idempotency.jdbc.dialect;

import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
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
 * PostgreSQL 12 and later, with the record table partitioned by the UTC day of {@code expires_at}
 * (DDL {@code ddl/postgresql-partitioned.sql}), so that purging a day of records is dropping its
 * partition ({@link #dropExpiredPartitions}): no row-by-row {@code DELETE}, no dead rows, no
 * vacuum debt, and a table that holds only the retention window. The bounded
 * {@link #purgeExpired purge} still works, row by row, across partitions.
 *
 * <p><b>The key's uniqueness.</b> A partitioned table's unique constraints must contain the
 * partition key, so the primary key is {@code (scope, key_id, expires_at)}, and the database no
 * longer refuses a second record of one key. The claim therefore serialises the claimers of one key
 * itself: it first takes a transaction-scoped advisory lock on the key
 * ({@code pg_advisory_xact_lock}, on the hashes of scope and id; a collision only makes two keys
 * wait for each other), then reads the record and inserts or takes it over as
 * {@link SqlDialect#claim} describes. The lock is held until the claimer's transaction ends, so the
 * next claimer reads the committed record and replays it. This needs <b>READ COMMITTED</b> (each
 * statement reads what is committed when it starts): under REPEATABLE READ or SERIALIZABLE a
 * snapshot taken before the lock would hide the record, so the claim refuses those levels
 * (SQLState 0A000) instead of inserting a second record. The lock wait is bounded by the policy's
 * lock timeout, as in {@link PostgresDialect}; a wait that runs out gives {@code InProgress} and
 * aborts the transaction (roll it back).
 *
 * <p><b>Cost</b>: a first execution costs 4 statements (the lock with a read of the isolation
 * level, the read, the insert under a savepoint, the completing {@code UPDATE}); a replay 2.
 * Chunks are claimed key by key. Every other operation is {@link PostgresDialect}'s.
 *
 * <p><b>Partitions.</b> Create them ahead of time, for every day a new record can expire in (at
 * least the retention plus a day), with {@link #createPartitions}, from a daily job; a record whose
 * day has no partition lands in the default partition, which should stay empty (a day partition
 * cannot be created over rows of the default one). Drop the days that have ended with
 * {@link #dropExpiredPartitions}. Both run DDL; each takes a short exclusive lock on the table, so
 * give their transaction a {@code lock_timeout} and run them again later if it runs out.
 *
 * <p>Stateless and thread-safe.
 */
public class PartitionedPostgresDialect extends PostgresDialect {

    private static final DateTimeFormatter DAY = DateTimeFormatter.ofPattern("yyyyMMdd");
    private static final Pattern PARTITION = Pattern.compile("_p(\\d{8})$");

    @Override
    public String name() {
        return "PostgreSQL (partitioned by expiry day)";
    }

    /** @return {@code ddl/postgresql-partitioned.sql}: the columns of {@code postgresql.sql}, partitioned */
    @Override
    public String ddlResource() {
        return "dev/idempotency/jdbc/ddl/postgresql-partitioned.sql";
    }

    /** The DDL, with the default partition in the table's schema. */
    @Override
    public String ddl(TableName table) {
        return super.ddl(table).replace("TABLE IF NOT EXISTS " + table.simpleName() + "_default",
                "TABLE IF NOT EXISTS " + partitionName(table, "default"));
    }

    /**
     * No: the table does not refuse a second record of one key, so a write-last record goes through
     * the claim, under its advisory lock ({@link SqlDialect#writeLast}).
     */
    @Override
    public boolean writesLastWithCommit() {
        return false;
    }

    @Override
    public Claim claim(Connection c, TableName table, ClaimRequest request) throws SQLException {
        Claim busy = ClaimRounds.busyOnLockTimeout(this, Claim.busy(), () -> {
            try (PreparedStatement s = c.prepareStatement(
                    "SELECT current_setting('transaction_isolation'), pg_advisory_xact_lock(hashtext(?), hashtext(?))")) {
                s.setString(1, request.key().scope());
                s.setString(2, request.key().id());
                try (ResultSet rs = withLockTimeout(s, request.lockTimeout(), s::executeQuery)) {
                    rs.next();
                    if (!"read committed".equals(rs.getString(1))) {
                        throw new SQLException("the record table partitioned by expiry day needs READ COMMITTED transactions, this one is "
                                + rs.getString(1).toUpperCase(java.util.Locale.ROOT) + ": a snapshot taken before the key's lock could"
                                + " hide its record, and the key would run twice", "0A000");
                    }
                }
            }
            return null; // the key's lock is held: claim it
        });
        if (busy != null) {
            return busy;
        }
        return claimReadingFirst(c, table, request);
    }

    /**
     * No: a chunk is claimed key by key, each as {@link #claim} under a savepoint (so that a key held
     * past the lock timeout leaves the transaction usable): the multi-row insert relies on a unique
     * key this table lacks.
     */
    @Override
    protected boolean multiRowClaims() {
        return false;
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
    public static List<String> createPartitions(Connection c, TableName table, Instant from, Instant to) throws SQLException {
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
    public static List<String> dropExpiredPartitions(Connection c, TableName table, Instant now, Duration lockTimeout) throws SQLException {
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

    /** @return the partition's name, in the table's schema; table names are plain identifiers, never quoted */
    private static String partitionName(TableName table, String suffix) {
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
