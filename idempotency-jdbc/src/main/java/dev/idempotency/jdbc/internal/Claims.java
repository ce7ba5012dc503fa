package dev.idempotency.jdbc.internal;

import dev.idempotency.jdbc.dialect.ClaimStrategy;
import dev.idempotency.jdbc.dialect.KeyLock;
import dev.idempotency.jdbc.dialect.SqlDialect;
import dev.idempotency.jdbc.dialect.TableName;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * The single claim, written once for every dialect, in the shape its {@link ClaimStrategy} names:
 * read first, then insert ({@link SqlDialect#claimInsert}) or take over; the same with locking reads;
 * the same after a lock on the key ({@link SqlDialect#keyLock()}); statements sent in one round trip
 * that insert the key and read its record ({@link SqlDialect#claimStatement}); or an upsert that
 * takes the write lock first, then a read ({@link SqlDialect#claimUpsert}). Each runs in the rounds
 * of {@link ClaimRounds}.
 *
 * <p>Part of the executor ({@link JdbcExecutor}). Stateless and thread-safe.
 */
final class Claims {

    private Claims() {
    }

    /** @see JdbcExecutor#claim */
    static Claim claim(JdbcExecutor d, Connection c, TableName table, ClaimRequest r, boolean databaseClock) throws SQLException {
        SqlDialect dialect = d.dialect();
        switch (dialect.claimStrategy()) {
            case ONE_ROUND_TRIP:
                return inOneRoundTrip(d, c, table, required(dialect.claimStatement(table, r.lockTimeout()), "claimStatement"), r, databaseClock);
            case UPSERT_FIRST:
                return upsertingFirst(d, c, table, required(dialect.claimUpsert(table), "claimUpsert"), r);
            case LOCKING_READ_FIRST:
                return lockingReadFirst(d, c, table, r, databaseClock);
            case KEY_LOCK_FIRST:
                Claim busy = lockKey(d, c, required(dialect.keyLock(), "keyLock"), r);
                return busy != null ? busy : readingFirst(d, c, table, r, databaseClock, false); // the key lock checked the level
            default:
                return readingFirst(d, c, table, r, databaseClock, true);
        }
    }

    private static <T> T required(@Nullable T sql, String what) {
        if (sql == null) {
            throw new IllegalStateException("the dialect's claim strategy needs its " + what + "()");
        }
        return sql;
    }

    /**
     * Read the record, then insert it or take it over; a duplicate on insert means read again. Under
     * READ UNCOMMITTED a record the plain read found may be another transaction's uncommitted row (a
     * claim in progress, or a completed one that may still roll back): it is read again with the
     * dialect's exclusive locking read, which waits for that transaction and reads the committed
     * record (H2). A plain read that finds nothing needs no second look: it would have seen an
     * uncommitted row.
     *
     * @param mayReadUncommitted whether the transaction may be at READ UNCOMMITTED ({@code false} once
     *     a key lock has checked its level), so that the level is asked when a record is found
     */
    static Claim readingFirst(JdbcExecutor d, Connection c, TableName table, ClaimRequest r, boolean databaseClock,
                              boolean mayReadUncommitted) throws SQLException {
        return ClaimRounds.repeat(ClaimRounds.KEPT_CHANGING_IN_SNAPSHOT, round -> {
                    Records.Row found = Records.select(c, table, r.key(), "");
                    if (found != null && mayReadUncommitted && readsUncommitted(c)) {
                        return ClaimRounds.busyOnLockTimeout(d, Claim.busy(), () ->
                                readFirstDecision(d, c, table, r, read(d, c, table, r, d.dialect().lockingRead(true)), databaseClock));
                    }
                    return readFirstDecision(d, c, table, r, found, databaseClock);
                });
    }

    /** @return what a read-first round decides on the record it read: existing, acquired, busy, or {@code null} to read again */
    private static @Nullable Claim readFirstDecision(JdbcExecutor d, Connection c, TableName table, ClaimRequest r,
                                                     Records.@Nullable Row found, boolean databaseClock) throws SQLException {
        Instant leaseNow = found == null ? r.now() : d.judgedBy(c, found, r, databaseClock);
        if (found != null && found.record().expiresAt().isAfter(found.leaseWritten() ? leaseNow : r.now())) {
            return Claim.existing(found.record());
        }
        return ClaimRounds.busyOnLockTimeout(d, Claim.busy(), () ->
                (found == null ? d.insertClaim(c, table, r) : d.takeOver(c, table, r, leaseNow)) ? Claim.acquired() : null);
    }

    /**
     * @param c the caller's connection
     * @return whether its transaction is at READ UNCOMMITTED, where a plain read can return another
     *     transaction's uncommitted record
     */
    static boolean readsUncommitted(Connection c) throws SQLException {
        return c.getTransactionIsolation() == Connection.TRANSACTION_READ_UNCOMMITTED;
    }

    /**
     * {@link ClaimStrategy#LOCKING_READ_FIRST} (MariaDB). A statement that waits for another
     * transaction's uncommitted row keeps a lock on it; when that transaction rolls back, InnoDB
     * turns the locks of the duplicate-key checks that waited on it (and, under REPEATABLE READ and
     * SERIALIZABLE, of every locking read) into gap locks, which block each other's inserts: with two
     * or more waiters, all but one would be chosen as deadlock victims. Under READ COMMITTED and READ
     * UNCOMMITTED a locking read's exclusive lock is not turned into a gap lock, and a locking read
     * that finds no row takes no lock, so there the claim waits in an exclusive locking read before it
     * inserts: the waiters of a claim that rolls back wake with no lock, one claims the key, the
     * others wait for it and replay. Under the stricter levels a locking read would take a gap lock
     * on every new key (two new claims would deadlock), so the first read stays plain, and the
     * waiters that lose reach the caller as a retryable conflict. Under READ UNCOMMITTED the plain
     * read also returns other transactions' uncommitted rows: a claim in progress, or a completed
     * record whose transaction may still roll back, which must not be replayed. So there a record
     * the plain read found is read again with the exclusive locking read too, which waits for its
     * transaction and reads the latest committed version. The level is read from the connection,
     * and only after the plain read, when its answer depends on it: MariaDB Connector/J 3 knows it
     * without a round trip once it was set on the connection or named in the URL, and otherwise
     * asks the server each time. A later round reads with a shared lock, which sees the committed
     * record whatever the snapshot.
     */
    private static Claim lockingReadFirst(JdbcExecutor d, Connection c, TableName table, ClaimRequest r, boolean databaseClock)
            throws SQLException {
        SqlDialect dialect = d.dialect();
        return ClaimRounds.busyOnLockTimeout(d, Claim.busy(), () ->
                ClaimRounds.repeat(ClaimRounds.KEPT_CHANGING, round -> {
                    Records.Row found = read(d, c, table, r, round > 0 ? dialect.lockingRead(false) : "");
                    if (round == 0 && (found == null ? waitsInALockingRead(c) : readsUncommitted(c))) {
                        found = read(d, c, table, r, dialect.lockingRead(true));
                    }
                    Instant leaseNow = found == null ? r.now() : d.judgedBy(c, found, r, databaseClock);
                    if (found != null && found.record().expiresAt().isAfter(found.leaseWritten() ? leaseNow : r.now())) {
                        return Claim.existing(found.record());
                    }
                    return (found == null ? d.insertClaim(c, table, r) : d.takeOver(c, table, r, leaseNow)) ? Claim.acquired() : null;
                }));
    }

    private static boolean waitsInALockingRead(Connection c) throws SQLException {
        int level = c.getTransactionIsolation();
        return level == Connection.TRANSACTION_READ_COMMITTED || level == Connection.TRANSACTION_READ_UNCOMMITTED;
    }

    private static Records.@Nullable Row read(JdbcExecutor d, Connection c, TableName table, ClaimRequest r, String lock)
            throws SQLException {
        try (PreparedStatement s = c.prepareStatement(Statements.select(table, lock))) {
            s.setString(1, r.key().scope());
            s.setString(2, r.key().id());
            try (ResultSet rs = d.withLockTimeout(s, r.lockTimeout(), s::executeQuery)) {
                return rs.next() ? Records.row(rs, 1) : null;
            }
        }
    }

    /** @return {@link Claim#busy()} if the key's lock could not be had in time, {@code null} once it is held */
    private static @Nullable Claim lockKey(JdbcExecutor d, Connection c, KeyLock lock, ClaimRequest r) throws SQLException {
        return ClaimRounds.busyOnLockTimeout(d, Claim.busy(), () -> {
            try (PreparedStatement s = c.prepareStatement(lock.query())) {
                s.setString(1, r.key().scope());
                s.setString(2, r.key().id());
                try (ResultSet rs = d.withLockTimeout(s, r.lockTimeout(), s::executeQuery)) {
                    rs.next();
                    String isolation = rs.getString(1);
                    if (!lock.isolation().equalsIgnoreCase(isolation)) {
                        throw new SQLException("the " + d.dialect().name() + " table needs "
                                + lock.isolation().toUpperCase(Locale.ROOT) + " transactions, this one is "
                                + String.valueOf(isolation).toUpperCase(Locale.ROOT) + ": a snapshot taken before the key's lock"
                                + " could hide its record, and the key would run twice", "0A000");
                    }
                }
            }
            return null; // the key's lock is held: claim it
        });
    }

    private static Claim inOneRoundTrip(JdbcExecutor d, Connection c, TableName table, String sql, ClaimRequest r,
                                        boolean databaseClock) throws SQLException {
        return ClaimRounds.repeat(ClaimRounds.KEPT_CHANGING, round ->
                ClaimRounds.busyOnLockTimeout(d, Claim.busy(), () -> {
                    Records.Row found;
                    try (PreparedStatement s = c.prepareStatement(sql)) {
                        Records.bindClaim(s, r);
                        s.setString(7, r.key().scope());
                        s.setString(8, r.key().id());
                        s.execute(); // the first result: the query before the insert
                        s.getMoreResults();
                        if (s.getUpdateCount() == 1) {
                            return Claim.acquired();
                        }
                        s.getMoreResults();
                        try (ResultSet rs = s.getResultSet()) {
                            rs.next();
                            found = rs.getString(2) == null ? null : Records.row(rs, 2);
                        }
                    }
                    if (found == null) {
                        return null; // the record vanished after the insert found it (purged): look again
                    }
                    Instant leaseNow = d.judgedBy(c, found, r, databaseClock);
                    if (found.record().expiresAt().isAfter(found.leaseWritten() ? leaseNow : r.now())) {
                        return Claim.existing(found.record());
                    }
                    return d.takeOver(c, table, r, leaseNow) ? Claim.acquired() : null;
                }));
    }

    private static Claim upsertingFirst(JdbcExecutor d, Connection c, TableName table, String sql, ClaimRequest r)
            throws SQLException {
        try (PreparedStatement s = c.prepareStatement(sql)) {
            Records.bindClaim(s, r);
            s.setLong(7, r.now().toEpochMilli());
            Claim claimed = d.writeOrNull(s, r.lockTimeout(), 1);
            if (claimed != null) {
                return claimed;
            }
        }
        // This transaction holds the write lock: the unexpired record cannot change or vanish now.
        Records.Row found = Records.select(c, table, r.key(), "");
        if (found == null) {
            throw new SQLException("the key's record was neither claimable nor readable", "40001");
        }
        return Claim.existing(found.record());
    }
}
