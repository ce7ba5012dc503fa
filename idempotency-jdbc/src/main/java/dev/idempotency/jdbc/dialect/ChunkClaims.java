package dev.idempotency.jdbc.dialect;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.StoredRecord;
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
 * of at most {@value SqlDialect#KEYS_PER_STATEMENT} keys, each slice as the dialect's
 * {@link Strategy} says, and a key that a slice's statements could not settle is claimed on its own,
 * as the dialect claims one key of a chunk ({@link SqlDialect#claimInChunk}).
 *
 * <p>Not an API: the dialects' own helper. Stateless and thread-safe.
 */
final class ChunkClaims {

    /** How a dialect claims a slice of a chunk's keys. */
    enum Strategy {
        /** Key by key, each as the dialect claims one key of a chunk. */
        KEY_BY_KEY,
        /**
         * One {@code SELECT} finds the existing records, one multi-row {@code INSERT} claims the
         * absent keys; if that insert meets a concurrent claim (a duplicate, or a lock wait that runs
         * out), nothing is inserted and the absent keys are claimed one by one. An expired record is
         * taken over on its own. A slice of one key is claimed on its own.
         */
        READ_FIRST,
        /**
         * One {@code INSERT} of the keys as arrays that skips the keys that have a record and returns the keys it
         * inserted ({@link SqlDialect#claimInsertReturningKeys}), then one {@code SELECT} of the
         * others; an expired record is taken over on its own. If the insert's lock wait runs out,
         * nothing is inserted and the slice is claimed key by key.
         */
        INSERT_FIRST
    }

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
    static List<Claim> claimAll(SqlDialect d, Connection c, TableName table, List<ClaimRequest> requests) throws SQLException {
        Strategy strategy = d.chunkClaims();
        List<Claim> claims = new ArrayList<>(requests.size());
        for (int from = 0; from < requests.size(); from += SqlDialect.KEYS_PER_STATEMENT) {
            List<ClaimRequest> slice = requests.subList(from, Math.min(requests.size(), from + SqlDialect.KEYS_PER_STATEMENT));
            if (strategy == Strategy.READ_FIRST && slice.size() > 1) {
                readingFirst(d, c, table, slice, claims);
            } else if (strategy == Strategy.INSERT_FIRST) {
                insertingFirst(d, c, table, slice, claims);
            } else {
                for (ClaimRequest r : slice) {
                    claims.add(d.claimInChunk(c, table, r));
                }
            }
        }
        return claims;
    }

    private static void readingFirst(SqlDialect d, Connection c, TableName table, List<ClaimRequest> slice, List<Claim> claims)
            throws SQLException {
        Map<IdempotencyKey, StoredRecord> found = d.selectAll(c, table, slice);
        Claim[] sliceClaims = new Claim[slice.size()];
        List<ClaimRequest> absent = new ArrayList<>();
        for (int i = 0; i < slice.size(); i++) {
            ClaimRequest r = slice.get(i);
            StoredRecord record = found.get(r.key());
            if (record == null) {
                absent.add(r);
            } else if (record.expiresAt().isAfter(r.now())) {
                sliceClaims[i] = Claim.existing(record);
            } else {
                sliceClaims[i] = d.claimInChunk(c, table, r);
            }
        }
        boolean inserted = !absent.isEmpty() && insertAll(d, c, table, absent);
        for (int i = 0; i < slice.size(); i++) {
            if (sliceClaims[i] == null) {
                sliceClaims[i] = inserted ? Claim.acquired() : d.claimInChunk(c, table, slice.get(i));
            }
            claims.add(sliceClaims[i]);
        }
    }

    /** @return {@code true} if every row was inserted; {@code false} (nothing inserted) on a duplicate or a lock timeout */
    private static boolean insertAll(SqlDialect d, Connection c, TableName table, List<ClaimRequest> absent) throws SQLException {
        try {
            return Savepoints.undoingFailure(c, d.failedStatementAbortsTransaction(), () -> {
                try (PreparedStatement s = c.prepareStatement(SqlDialect.multiRowClaimInsert(table, absent.size()))) {
                    SqlDialect.bindClaims(s, absent);
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

    private static void insertingFirst(SqlDialect d, Connection c, TableName table, List<ClaimRequest> slice, List<Claim> claims)
            throws SQLException {
        Set<IdempotencyKey> inserted = insertReturning(d, c, table, slice);
        if (inserted == null) {
            for (ClaimRequest r : slice) {
                claims.add(d.claimInChunk(c, table, r));
            }
            return;
        }
        List<ClaimRequest> rest = slice.stream().filter(r -> !inserted.contains(r.key())).toList();
        Map<IdempotencyKey, StoredRecord> found = rest.isEmpty() ? Map.of() : d.selectAll(c, table, rest);
        for (ClaimRequest r : slice) {
            StoredRecord record = found.get(r.key());
            if (inserted.contains(r.key())) {
                claims.add(Claim.acquired());
            } else if (record != null && record.expiresAt().isAfter(r.now())) {
                claims.add(Claim.existing(record));
            } else {
                claims.add(d.claimInChunk(c, table, r));
            }
        }
    }

    /** @return the keys the insert claimed, or {@code null} if a lock wait ran out (nothing inserted) */
    private static Set<IdempotencyKey> insertReturning(SqlDialect d, Connection c, TableName table, List<ClaimRequest> slice)
            throws SQLException {
        try {
            return Savepoints.undoingFailure(c, d.failedStatementAbortsTransaction(), () -> {
                try (PreparedStatement s = c.prepareStatement(d.claimInsertReturningKeys(table))) {
                    SqlDialect.bindClaimArrays(c, s, slice);
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
