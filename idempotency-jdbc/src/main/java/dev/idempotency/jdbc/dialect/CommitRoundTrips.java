package dev.idempotency.jdbc.dialect;

import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.StoredRecord;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * The writes sent with the {@code COMMIT}, written once for every dialect: where the dialect gives
 * a statement that ends with its own {@code COMMIT} ({@link SqlDialect#completionWithCommit},
 * {@link SqlDialect#lastWriteWithCommit}), the write and the commit travel in one round trip; else
 * the write runs as usual and {@link Connection#commit()} follows.
 *
 * <p>Not an API: the dialects' own helper. Stateless and thread-safe.
 */
final class CommitRoundTrips {

    private CommitRoundTrips() {
    }

    /** @see SqlDialect#completeAndCommit */
    static void complete(SqlDialect d, Connection c, TableName table, Completion done) throws SQLException {
        String withCommit = d.completionWithCommit(table);
        if (withCommit == null) {
            if (d.complete(c, table, done) != 1) {
                throw new SQLException("the claimed record was not found", SqlDialect.RECORD_MISSING);
            }
        } else {
            try (PreparedStatement s = c.prepareStatement(withCommit)) {
                d.bindCompletion(s, done);
                s.execute();
            }
        }
        c.commit();
    }

    /** @see SqlDialect#writeLastAndCommit */
    static Claim writeLast(SqlDialect d, Connection c, TableName table, ClaimRequest r, Completion done) throws SQLException {
        String withCommit = d.lastWriteWithCommit(table, r.lockTimeout());
        if (withCommit == null) {
            Claim claim = d.writeLast(c, table, r, done);
            if (claim instanceof Claim.Acquired) {
                c.commit();
            }
            return claim;
        }
        try (PreparedStatement s = c.prepareStatement(withCommit)) {
            d.bindCompletedRecord(s, r, done);
            s.setLong(10, r.now().toEpochMilli());
            s.execute();
        } catch (SQLException e) {
            boolean busy = d.isLockTimeout(e);
            if (!busy && !d.isRecordMissing(e)) {
                throw e;
            }
            c.rollback();
            if (busy) {
                return Claim.busy();
            }
            StoredRecord found = d.select(c, table, r.key());
            if (found == null || !found.expiresAt().isAfter(r.now())) {
                throw new SQLException("the key's record changed between the refused write and its read", "40001", e);
            }
            return Claim.existing(found);
        }
        c.commit();
        return Claim.acquired();
    }
}
