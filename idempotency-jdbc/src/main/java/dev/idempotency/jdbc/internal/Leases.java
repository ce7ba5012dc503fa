package dev.idempotency.jdbc.internal;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.jdbc.dialect.TableName;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.LeasedCompletion;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.RecoveryPoint;
import dev.idempotency.spi.StoredRecord;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The statements of lease mode, written once for every dialect, as the executor's lease
 * operations describe them: the lease claim, in the claim's rounds ({@link ClaimRounds}) on top of
 * the dialect's own claim, and the writes fenced by the owner token. Every time is the database
 * server's ({@link JdbcExecutor#databaseNow}).
 *
 * <p>Part of the executor ({@link JdbcExecutor}). Stateless and thread-safe.
 */
final class Leases {

    private Leases() {
    }

    /** @see JdbcExecutor#claimLease */
    static LeaseClaim claim(JdbcExecutor d, Connection c, TableName table, LeaseRequest r) throws SQLException {
        Instant now = d.databaseNow(c);
        Instant leaseUntil = now.plus(r.lease());
        ClaimRequest request = new ClaimRequest(r.key(), r.fingerprint(), now, now.plus(r.retention()), r.lockTimeout());
        return ClaimRounds.repeat("the key's lease kept changing under concurrent claims", round -> {
            // Where the claim counts a duplicate, undo that count: a lease counts attempts itself.
            Claim claim = Savepoints.undoingIf(c, d.dialect().claimCountsDuplicates(), () -> d.claimByDatabaseClock(c, table, request),
                    found -> found instanceof Claim.Existing);
            if (claim instanceof Claim.Busy) {
                return LeaseClaim.busy();
            }
            if (claim instanceof Claim.Acquired) {
                leaseUpdate(c, table, r.key(), "owner_token = ?, lease_until = ?, attempts = 1, phase = NULL", null, s -> {
                    s.setString(1, r.ownerToken());
                    s.setLong(2, leaseUntil.toEpochMilli());
                });
                return new LeaseClaim.Acquired(1, now, leaseUntil, null);
            }
            StoredRecord record = ((Claim.Existing) claim).record();
            if (record.status() != RecordStatus.IN_PROGRESS) {
                return new LeaseClaim.Existing(record);
            }
            LeaseRow row = read(c, table, r.key());
            if (row == null) {
                return null; // purged meanwhile: claim again
            }
            boolean live = row.leaseUntil != null && row.leaseUntil > now.toEpochMilli();
            if (live || !row.fingerprint.equals(r.fingerprint())) {
                return new LeaseClaim.Held(row.fingerprint, Instant.ofEpochMilli(row.leaseUntil == null ? now.toEpochMilli() : row.leaseUntil),
                        row.attempts, now, record.expiresAt());
            }
            return ClaimRounds.busyOnLockTimeout(d, LeaseClaim.busy(), () -> takeOver(d, c, table, r, now, leaseUntil, row)
                    ? new LeaseClaim.Acquired(row.attempts + 1, now, leaseUntil, row.recoveryPoint) : null);
        });
    }

    private static @Nullable LeaseRow read(Connection c, TableName table, IdempotencyKey key) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("SELECT fingerprint, lease_until, attempts, owner_token, phase, result_codec,"
                + " result FROM " + table + " WHERE scope = ? AND key_id = ? AND status = ?")) {
            s.setString(1, key.scope());
            s.setString(2, key.id());
            s.setString(3, RecordStatus.IN_PROGRESS.name());
            try (ResultSet rs = s.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                long lease = rs.getLong(2);
                Long leaseUntil = rs.wasNull() ? null : lease;
                RecoveryPoint point = RecoveryPoint.PREPARED.equals(rs.getString(5))
                        ? new RecoveryPoint(rs.getString(6), rs.getBytes(7)) : null;
                return new LeaseRow(Fingerprint.fromValue(rs.getString(1)), leaseUntil, rs.getInt(3), rs.getString(4), point);
            }
        }
    }

    private static boolean takeOver(JdbcExecutor d, Connection c, TableName table, LeaseRequest r, Instant now, Instant leaseUntil, LeaseRow seen)
            throws SQLException {
        try (PreparedStatement s = c.prepareStatement("UPDATE " + table + " SET owner_token = ?, lease_until = ?, attempts = attempts + 1"
                + " WHERE scope = ? AND key_id = ? AND status = ? AND fingerprint = ? AND attempts = ?"
                + " AND (lease_until IS NULL OR lease_until <= ?) AND " + (seen.ownerToken == null ? "owner_token IS NULL" : "owner_token = ?"))) {
            s.setString(1, r.ownerToken());
            s.setLong(2, leaseUntil.toEpochMilli());
            s.setString(3, r.key().scope());
            s.setString(4, r.key().id());
            s.setString(5, RecordStatus.IN_PROGRESS.name());
            s.setString(6, seen.fingerprint.value());
            s.setInt(7, seen.attempts);
            s.setLong(8, now.toEpochMilli());
            if (seen.ownerToken != null) {
                s.setString(9, seen.ownerToken);
            }
            return d.withLockTimeout(s, r.lockTimeout(), s::executeUpdate) == 1;
        }
    }

    /** @see JdbcExecutor#extendLease */
    static Optional<Instant> extend(JdbcExecutor d, Connection c, TableName table, IdempotencyKey key, String ownerToken, Duration lease)
            throws SQLException {
        Instant until = d.databaseNow(c).plus(lease);
        int rows = leaseUpdate(c, table, key, "lease_until = ?", ownerToken, s -> s.setLong(1, until.toEpochMilli()));
        return rows == 1 ? Optional.of(until) : Optional.empty();
    }

    /** @see JdbcExecutor#checkpoint */
    static boolean checkpoint(Connection c, TableName table, IdempotencyKey key, String ownerToken, RecoveryPoint point)
            throws SQLException {
        return leaseUpdate(c, table, key, "phase = ?, result_codec = ?, result = ?", ownerToken, s -> {
            s.setString(1, RecoveryPoint.PREPARED);
            s.setString(2, point.codec());
            Records.bindResult(s, 3, point.state());
        }) == 1;
    }

    /** @see JdbcExecutor#completeLeased */
    static Optional<Instant> complete(JdbcExecutor d, Connection c, TableName table, String ownerToken, LeasedCompletion done)
            throws SQLException {
        Instant now = d.databaseNow(c);
        int rows = leaseUpdate(c, table, done.key(), "status = ?, result_codec = ?, result = ?, completed_at = ?, expires_at = ?,"
                + " lease_until = NULL, phase = NULL", ownerToken, s -> {
                    s.setString(1, done.status().name());
                    s.setString(2, done.codec());
                    Records.bindResult(s, 3, done.result());
                    s.setLong(4, now.toEpochMilli());
                    s.setLong(5, now.plus(done.retention()).toEpochMilli());
                });
        return rows == 1 ? Optional.of(now) : Optional.empty();
    }

    /** @see JdbcExecutor#releaseLease */
    static boolean release(Connection c, TableName table, IdempotencyKey key, String ownerToken) throws SQLException {
        return leaseUpdate(c, table, key, "lease_until = 0", ownerToken, s -> {
        }) == 1;
    }

    /** Binds the {@code SET} parameters of a lease update, from index 1. */
    @FunctionalInterface
    private interface Binder {
        void bind(PreparedStatement s) throws SQLException;
    }

    /**
     * {@code UPDATE table SET <set> WHERE key AND status = IN_PROGRESS [AND owner_token = ?]}: the
     * fence of every lease write.
     */
    private static int leaseUpdate(Connection c, TableName table, IdempotencyKey key, String set, @Nullable String ownerToken, Binder binder)
            throws SQLException {
        int setParameters = (int) set.chars().filter(ch -> ch == '?').count();
        try (PreparedStatement s = c.prepareStatement("UPDATE " + table + " SET " + set + " WHERE scope = ? AND key_id = ? AND status = ?"
                + (ownerToken == null ? "" : " AND owner_token = ?"))) {
            binder.bind(s);
            s.setString(setParameters + 1, key.scope());
            s.setString(setParameters + 2, key.id());
            s.setString(setParameters + 3, RecordStatus.IN_PROGRESS.name());
            if (ownerToken != null) {
                s.setString(setParameters + 4, ownerToken);
            }
            return s.executeUpdate();
        }
    }

    /** The lease columns of a record in progress. */
    private record LeaseRow(Fingerprint fingerprint, Long leaseUntil, int attempts, String ownerToken, RecoveryPoint recoveryPoint) {
    }
}
