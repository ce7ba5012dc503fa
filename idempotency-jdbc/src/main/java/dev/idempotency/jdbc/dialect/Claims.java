package dev.idempotency.jdbc.dialect;

import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.StoredRecord;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * The single claim, written once for every dialect, in one of three shapes that the dialect's SQL
 * chooses: statements sent in one round trip that insert the key and read its record, the record
 * taken over in a second round trip only if it has expired ({@link SqlDialect#claimStatement},
 * PostgreSQL); an upsert that takes the write lock first, then a read ({@link SqlDialect#claimUpsert},
 * SQLite); or, by default, a read and then the dialect's insert ({@link SqlDialect#claimInsert}: an
 * {@code INSERT}, a {@code MERGE}, an {@code INSERT ... ON DUPLICATE KEY}) or a take-over, in
 * {@link ClaimRounds}.
 *
 * <p>Not an API: the dialects' own helper. Stateless and thread-safe.
 */
final class Claims {

    private Claims() {
    }

    /** @see SqlDialect#claim */
    static Claim claim(SqlDialect d, Connection c, TableName table, ClaimRequest r) throws SQLException {
        String single = d.claimStatement(table, r.lockTimeout());
        if (single != null) {
            return inOneStatement(d, c, table, single, r);
        }
        String upsert = d.claimUpsert(table);
        if (upsert != null) {
            return upsertingFirst(d, c, table, upsert, r);
        }
        return readingFirst(d, c, table, r);
    }

    /** Read the record, then insert it or take it over; a duplicate on insert means read again. */
    static Claim readingFirst(SqlDialect d, Connection c, TableName table, ClaimRequest r) throws SQLException {
        return ClaimRounds.repeat("the key's record kept changing under concurrent claims; the transaction's snapshot"
                + " cannot see the committed record", round -> {
                    StoredRecord found = d.select(c, table, r.key());
                    if (found != null && found.expiresAt().isAfter(r.now())) {
                        return Claim.existing(found);
                    }
                    return ClaimRounds.busyOnLockTimeout(d, Claim.busy(), () ->
                            (found == null ? d.insertClaim(c, table, r) : d.takeOver(c, table, r)) ? Claim.acquired() : null);
                });
    }

    private static Claim inOneStatement(SqlDialect d, Connection c, TableName table, String sql, ClaimRequest r)
            throws SQLException {
        return ClaimRounds.repeat("the key's record kept changing under concurrent claims", round ->
                ClaimRounds.busyOnLockTimeout(d, Claim.busy(), () -> {
                    StoredRecord found;
                    try (PreparedStatement s = c.prepareStatement(sql)) {
                        SqlDialect.bindClaim(s, r);
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
                            found = rs.getString(2) == null ? null : d.readRecord(rs, 2);
                        }
                    }
                    if (found == null) {
                        return null; // the record vanished after the insert found it (purged): look again
                    }
                    if (found.expiresAt().isAfter(r.now())) {
                        return Claim.existing(found);
                    }
                    return d.takeOver(c, table, r) ? Claim.acquired() : null;
                }));
    }

    private static Claim upsertingFirst(SqlDialect d, Connection c, TableName table, String sql, ClaimRequest r)
            throws SQLException {
        try (PreparedStatement s = c.prepareStatement(sql)) {
            SqlDialect.bindClaim(s, r);
            s.setLong(7, r.now().toEpochMilli());
            Claim claimed = d.writeOrNull(s, r.lockTimeout(), 1);
            if (claimed != null) {
                return claimed;
            }
        }
        // This transaction holds the write lock: the unexpired record cannot change or vanish now.
        StoredRecord found = d.select(c, table, r.key());
        if (found == null) {
            throw new SQLException("the key's record was neither claimable nor readable", "40001");
        }
        return Claim.existing(found);
    }
}
