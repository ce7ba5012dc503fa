package dev.idempotency.jdbc.internal;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.jdbc.dialect.TableName;
import dev.idempotency.spi.PendingOperation;
import dev.idempotency.spi.RecordStatus;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The table of named operations in progress ({@link TableName#pending()}), in SQL that every
 * supported database runs as it is: one row per key, beside the record, which only named
 * operations write, so that the other modes never touch it.
 */
final class PendingOperations {

    private PendingOperations() {
    }

    /** Enlists the key under {@code operation} if the token holds its record in progress; replaces a stale entry. */
    static boolean enlist(Connection c, TableName table, IdempotencyKey key, String ownerToken, String operation) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("DELETE FROM " + table.pending() + " WHERE scope = ? AND key_id = ?")) {
            s.setString(1, key.scope());
            s.setString(2, key.id());
            s.executeUpdate();
        }
        try (PreparedStatement s = c.prepareStatement("INSERT INTO " + table.pending() + " (scope, key_id, operation)"
                + " SELECT scope, key_id, ? FROM " + table + " WHERE scope = ? AND key_id = ? AND status = ? AND owner_token = ?")) {
            s.setString(1, operation);
            s.setString(2, key.scope());
            s.setString(3, key.id());
            s.setString(4, RecordStatus.IN_PROGRESS.name());
            s.setString(5, ownerToken);
            return s.executeUpdate() == 1;
        }
    }

    static void delist(Connection c, TableName table, IdempotencyKey key) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("DELETE FROM " + table.pending() + " WHERE scope = ? AND key_id = ?")) {
            s.setString(1, key.scope());
            s.setString(2, key.id());
            s.executeUpdate();
        }
    }

    /** A page of entries after {@code after} in key order, each with its record's state at the database's {@code now}. */
    static List<PendingOperation> page(Connection c, TableName table, @Nullable IdempotencyKey after, int limit, Instant now)
            throws SQLException {
        String sql = "SELECT p.scope, p.key_id, p.operation, t.status, t.fingerprint, t.attempts, t.lease_until"
                + " FROM " + table.pending() + " p LEFT JOIN " + table + " t ON t.scope = p.scope AND t.key_id = p.key_id"
                + (after == null ? "" : " WHERE p.scope > ? OR (p.scope = ? AND p.key_id > ?)")
                + " ORDER BY p.scope, p.key_id";
        try (PreparedStatement s = c.prepareStatement(sql)) {
            if (after != null) {
                s.setString(1, after.scope());
                s.setString(2, after.scope());
                s.setString(3, after.id());
            }
            s.setMaxRows(limit);
            List<PendingOperation> page = new ArrayList<>();
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next() && page.size() < limit) {
                    String status = rs.getString(4);
                    String fingerprint = rs.getString(5);
                    int attempts = rs.getInt(6);
                    long lease = rs.getLong(7);
                    Instant leaseUntil = rs.wasNull() ? null : Instant.ofEpochMilli(lease);
                    page.add(new PendingOperation(IdempotencyKey.of(rs.getString(1), rs.getString(2)), rs.getString(3),
                            status == null ? null : RecordStatus.valueOf(status),
                            fingerprint == null ? null : Fingerprint.fromValue(fingerprint), attempts, leaseUntil, now));
                }
            }
            return page;
        }
    }
}
