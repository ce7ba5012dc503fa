package dev.idempotency.jdbc.internal;

import dev.idempotency.jdbc.dialect.TableName;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.jdbc.dialect.ChunkClaiming;
import dev.idempotency.jdbc.dialect.SqlDialect;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The claims of a batch job's chunk, written once for every dialect: the chunk is claimed in slices
 * of at most {@value #KEYS_PER_STATEMENT} keys, each slice as the dialect's
 * {@link SqlDialect#chunkClaiming()} says, and a key that a slice's statements could not settle is
 * claimed on its own, as a single claim; so is a key whose record lease mode wrote, which the
 * single claim judges by the database's clock. Under READ UNCOMMITTED a {@link ChunkClaiming#READ_FIRST}
 * chunk is claimed key by key: its slice's plain read would see other transactions' uncommitted
 * records.
 *
 * <p>Part of the executor ({@link JdbcExecutor}). Stateless and thread-safe.
 */
final class ChunkClaims {

    /** The most keys one chunk statement binds; a larger chunk is claimed in slices of this size. */
    static final int KEYS_PER_STATEMENT = 500;

    private ChunkClaims() {
    }

    /**
     * @param d the dialect
     * @param c the caller's connection, in a transaction
     * @param table the table
     * @param requests the requests, sorted by key, no key twice
     * @return one claim per request, in order
     * @throws SQLException if a statement fails for another reason than a duplicate or a lock timeout
     */
    static List<Claim> claimAll(JdbcExecutor d, Connection c, TableName table, List<ClaimRequest> requests) throws SQLException {
        ChunkClaiming strategy = d.dialect().chunkClaiming();
        if (strategy == ChunkClaiming.READ_FIRST && Claims.readsUncommitted(c)) {
            // The slice's plain read would return other transactions' uncommitted records as if they
            // were committed: each key is claimed on its own, where the single claim reads past them.
            strategy = ChunkClaiming.KEY_BY_KEY;
        }
        List<Claim> claims = new ArrayList<>(requests.size());
        for (int from = 0; from < requests.size(); from += ChunkClaims.KEYS_PER_STATEMENT) {
            List<ClaimRequest> slice = requests.subList(from, Math.min(requests.size(), from + ChunkClaims.KEYS_PER_STATEMENT));
            if (strategy == ChunkClaiming.READ_FIRST && slice.size() > 1) {
                readingFirst(d, c, table, slice, claims);
            } else if (strategy == ChunkClaiming.INSERT_FIRST) {
                insertingFirst(d, c, table, slice, claims);
            } else {
                for (ClaimRequest r : slice) {
                    claims.add(claimOne(d, c, table, r));
                }
            }
        }
        return claims;
    }

    /**
     * One key of a chunk, as a single claim; where a failed statement aborts the transaction, under a
     * savepoint, so that a lock wait that runs out answers {@link Claim.Busy} and the transaction goes on.
     */
    private static Claim claimOne(JdbcExecutor d, Connection c, TableName table, ClaimRequest r) throws SQLException {
        return Savepoints.undoingIf(c, d.dialect().failedStatementAbortsTransaction(), () -> d.claim(c, table, r),
                claim -> claim instanceof Claim.Busy);
    }

    private static void readingFirst(JdbcExecutor d, Connection c, TableName table, List<ClaimRequest> slice, List<Claim> claims)
            throws SQLException {
        Map<IdempotencyKey, Records.Row> found = Records.selectAll(c, table, slice);
        Claim[] sliceClaims = new Claim[slice.size()];
        List<ClaimRequest> absent = new ArrayList<>();
        for (int i = 0; i < slice.size(); i++) {
            ClaimRequest r = slice.get(i);
            Records.Row record = found.get(r.key());
            if (record == null) {
                absent.add(r);
            } else if (!record.leaseWritten() && record.record().expiresAt().isAfter(r.now())) {
                sliceClaims[i] = Claim.existing(record.record());
            } else {
                sliceClaims[i] = claimOne(d, c, table, r);
            }
        }
        boolean inserted = !absent.isEmpty() && insertAll(d, c, table, absent);
        for (int i = 0; i < slice.size(); i++) {
            if (sliceClaims[i] == null) {
                sliceClaims[i] = inserted ? Claim.acquired() : claimOne(d, c, table, slice.get(i));
            }
            claims.add(sliceClaims[i]);
        }
    }

    /** @return {@code true} if every row was inserted; {@code false} (nothing inserted) on a duplicate or a lock timeout */
    private static boolean insertAll(JdbcExecutor d, Connection c, TableName table, List<ClaimRequest> absent) throws SQLException {
        try {
            return Savepoints.undoingFailure(c, d.dialect().failedStatementAbortsTransaction(), () -> {
                try (PreparedStatement s = c.prepareStatement(SqlDialect.multiRowClaimInsert(table, absent.size()))) {
                    Records.bindClaims(s, absent);
                    d.withLockTimeout(s, absent.get(0).lockTimeout(), s::executeUpdate);
                    return true;
                }
            });
        } catch (SQLException e) {
            if (d.isDuplicateKey(e) || d.isLockTimeout(e)) {
                return false;
            }
            throw e;
        }
    }

    private static void insertingFirst(JdbcExecutor d, Connection c, TableName table, List<ClaimRequest> slice, List<Claim> claims)
            throws SQLException {
        Set<IdempotencyKey> inserted = insertReturning(d, c, table, slice);
        if (inserted == null) {
            for (ClaimRequest r : slice) {
                claims.add(claimOne(d, c, table, r));
            }
            return;
        }
        List<ClaimRequest> rest = slice.stream().filter(r -> !inserted.contains(r.key())).toList();
        Map<IdempotencyKey, Records.Row> found = rest.isEmpty() ? Map.of() : Records.selectAll(c, table, rest);
        for (ClaimRequest r : slice) {
            Records.Row record = found.get(r.key());
            if (inserted.contains(r.key())) {
                claims.add(Claim.acquired());
            } else if (record != null && !record.leaseWritten() && record.record().expiresAt().isAfter(r.now())) {
                claims.add(Claim.existing(record.record()));
            } else {
                claims.add(claimOne(d, c, table, r));
            }
        }
    }

    /** @return the keys the insert claimed, or {@code null} if a lock wait ran out (nothing inserted) */
    private static Set<IdempotencyKey> insertReturning(JdbcExecutor d, Connection c, TableName table, List<ClaimRequest> slice)
            throws SQLException {
        try {
            return Savepoints.undoingFailure(c, d.dialect().failedStatementAbortsTransaction(), () -> {
                try (PreparedStatement s = c.prepareStatement(d.dialect().claimInsertReturningKeys(table))) {
                    Records.bindClaimArrays(c, s, slice);
                    Set<IdempotencyKey> keys = new HashSet<>();
                    try (ResultSet rs = d.withLockTimeout(s, slice.get(0).lockTimeout(), s::executeQuery)) {
                        while (rs.next()) {
                            keys.add(IdempotencyKey.of(rs.getString(1), rs.getString(2)));
                        }
                    }
                    return keys;
                }
            });
        } catch (SQLException e) {
            if (d.isLockTimeout(e)) {
                return null;
            }
            throw e;
        }
    }
}
