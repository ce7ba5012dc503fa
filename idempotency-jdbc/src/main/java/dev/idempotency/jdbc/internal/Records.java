package dev.idempotency.jdbc.internal;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.jdbc.dialect.SqlDialect;
import dev.idempotency.jdbc.dialect.TableName;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.StoredRecord;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The record's columns as every dialect's statements bind and read them ({@link SqlDialect#COLUMNS}):
 * the parameters of the claim, the take-over, the completion and the completed record, and the reads
 * of one record or a slice of them. Stateless and thread-safe.
 */
final class Records {

    private Records() {
    }

    /** Binds scope, key id, fingerprint, status, created and expires of each request, from index 1. */
    static void bindClaims(PreparedStatement s, List<ClaimRequest> requests) throws SQLException {
        int p = 0;
        for (ClaimRequest r : requests) {
            s.setString(++p, r.key().scope());
            s.setString(++p, r.key().id());
            s.setString(++p, r.fingerprint().value());
            s.setString(++p, RecordStatus.IN_PROGRESS.name());
            s.setLong(++p, r.now().toEpochMilli());
            s.setLong(++p, r.expiresAt().toEpochMilli());
        }
    }

    static void bindClaim(PreparedStatement s, ClaimRequest r) throws SQLException {
        bindClaims(s, List.of(r));
    }

    /** Binds the claims as six arrays (scopes, key ids, fingerprints, statuses, created, expires), from index 1. */
    static void bindClaimArrays(Connection c, PreparedStatement s, List<ClaimRequest> requests) throws SQLException {
        s.setArray(1, array(c, "varchar", requests, r -> r.key().scope()));
        s.setArray(2, array(c, "varchar", requests, r -> r.key().id()));
        s.setArray(3, array(c, "varchar", requests, r -> r.fingerprint().value()));
        s.setArray(4, array(c, "varchar", requests, r -> RecordStatus.IN_PROGRESS.name()));
        s.setArray(5, array(c, "int8", requests, r -> r.now().toEpochMilli()));
        s.setArray(6, array(c, "int8", requests, r -> r.expiresAt().toEpochMilli()));
    }

    /** @return an array parameter of SQL type {@code type}, one element per row by {@code element} */
    static <R> java.sql.Array array(Connection c, String type, List<R> rows, Function<? super R, ?> element) throws SQLException {
        Object[] elements = type.equals("int8") ? new Long[rows.size()] : new String[rows.size()];
        for (int i = 0; i < elements.length; i++) {
            elements[i] = element.apply(rows.get(i));
        }
        return c.createArrayOf(type, elements);
    }

    /**
     * Binds a take-over's eight parameters from {@code first} on: the new fingerprint, status, claim
     * time and expiry, then the key and the instants at or before which its record has expired: the
     * engine's now for a record of the transactional modes, {@code leaseNow} for one lease mode wrote.
     */
    static void bindTakeOver(PreparedStatement s, int first, ClaimRequest r, Instant leaseNow) throws SQLException {
        s.setString(first, r.fingerprint().value());
        s.setString(first + 1, RecordStatus.IN_PROGRESS.name());
        s.setLong(first + 2, r.now().toEpochMilli());
        s.setLong(first + 3, r.expiresAt().toEpochMilli());
        s.setString(first + 4, r.key().scope());
        s.setString(first + 5, r.key().id());
        s.setLong(first + 6, r.now().toEpochMilli());
        s.setLong(first + 7, leaseNow.toEpochMilli());
    }

    /** Binds status, codec, result, completed and expires, then scope and key id, from index 1. */
    static void bindCompletion(PreparedStatement s, Completion done) throws SQLException {
        s.setString(1, done.status().name());
        s.setString(2, done.codec());
        bindResult(s, 3, done.result());
        s.setLong(4, done.completedAt().toEpochMilli());
        s.setLong(5, done.expiresAt().toEpochMilli());
        s.setString(6, done.key().scope());
        s.setString(7, done.key().id());
    }

    /** Binds a completed record from index 1: scope, key id, fingerprint, status, codec, result, created, completed, expires. */
    static void bindCompletedRecord(PreparedStatement s, ClaimRequest r, Completion done) throws SQLException {
        s.setString(1, r.key().scope());
        s.setString(2, r.key().id());
        s.setString(3, r.fingerprint().value());
        s.setString(4, done.status().name());
        s.setString(5, done.codec());
        bindResult(s, 6, done.result());
        s.setLong(7, r.now().toEpochMilli());
        s.setLong(8, done.completedAt().toEpochMilli());
        s.setLong(9, done.expiresAt().toEpochMilli());
    }

    /**
     * Binds an encoded value, or SQL NULL: {@code setBytes} with a Java {@code null}, which JDBC sets
     * to SQL NULL of the parameter's own type. ({@code setNull(index, Types.VARBINARY)} names a type,
     * which Derby refuses for a {@code BLOB} column: 22005.)
     */
    static void bindResult(PreparedStatement s, int index, byte @Nullable [] result) throws SQLException {
        s.setBytes(index, result);
    }

    /** @return the completing {@code UPDATE}, whose parameters {@link #bindCompletion} binds */
    static String completionUpdate(TableName table) {
        return Statements.completion(table);
    }

    /**
     * A record as read, and whether lease mode wrote it (its owner token is set): then its times are
     * the database's clock, and whether it has expired is judged by that clock.
     *
     * @param record the record
     * @param leaseWritten whether lease mode wrote it
     */
    record Row(StoredRecord record, boolean leaseWritten) {
    }

    /** Reads a row from column {@code first} in {@link SqlDialect#COLUMNS} order. */
    static Row row(ResultSet rs, int first) throws SQLException {
        return new Row(read(rs, first), rs.getString(first + 10) != null);
    }

    /** Reads a record from the current row, from column {@code first} in {@link SqlDialect#COLUMNS} order. */
    static StoredRecord read(ResultSet rs, int first) throws SQLException {
        IdempotencyKey key = IdempotencyKey.of(rs.getString(first), rs.getString(first + 1));
        long completed = rs.getLong(first + 7);
        Instant completedAt = rs.wasNull() ? null : Instant.ofEpochMilli(completed);
        long lease = rs.getLong(first + 9);
        Instant leaseUntil = rs.wasNull() ? null : Instant.ofEpochMilli(lease);
        return new StoredRecord(key, Fingerprint.fromValue(rs.getString(first + 2)), RecordStatus.valueOf(rs.getString(first + 3)),
                rs.getString(first + 4), rs.getBytes(first + 5), Instant.ofEpochMilli(rs.getLong(first + 6)), completedAt,
                Instant.ofEpochMilli(rs.getLong(first + 8)), leaseUntil);
    }

    /** @return the key's record as this transaction sees it, read with {@code suffix} (a locking read, or ""), or {@code null} */
    static @Nullable Row select(Connection c, TableName table, IdempotencyKey key, String suffix) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(Statements.select(table, suffix))) {
            s.setString(1, key.scope());
            s.setString(2, key.id());
            try (ResultSet rs = s.executeQuery()) {
                return rs.next() ? row(rs, 1) : null;
            }
        }
    }

    /** Reads the records of a slice of keys (sorted, no key twice) in one {@code SELECT}; returns those found, by key. */
    static Map<IdempotencyKey, Row> selectAll(Connection c, TableName table, List<ClaimRequest> slice) throws SQLException {
        // Keys grouped by scope (the slice is sorted): "scope = ? AND key_id IN (...)" lets every database
        // look the keys up in the primary key, where "(scope = ? AND key_id = ?) OR ..." makes some scan
        // every record of the scope.
        Map<String, List<String>> idsByScope = new LinkedHashMap<>();
        for (ClaimRequest r : slice) {
            idsByScope.computeIfAbsent(r.key().scope(), scope -> new ArrayList<>()).add(r.key().id());
        }
        StringBuilder sql = new StringBuilder("SELECT " + SqlDialect.COLUMNS + " FROM " + table + " WHERE ");
        boolean firstScope = true;
        for (List<String> ids : idsByScope.values()) {
            sql.append(firstScope ? "" : " OR ").append("(scope = ? AND key_id IN (");
            for (int i = 0; i < ids.size(); i++) {
                sql.append(i == 0 ? "?" : ", ?");
            }
            sql.append("))");
            firstScope = false;
        }
        Map<IdempotencyKey, Row> found = new HashMap<>();
        try (PreparedStatement s = c.prepareStatement(sql.toString())) {
            int p = 1;
            for (Map.Entry<String, List<String>> scope : idsByScope.entrySet()) {
                s.setString(p++, scope.getKey());
                for (String id : scope.getValue()) {
                    s.setString(p++, id);
                }
            }
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    Row row = row(rs, 1);
                    found.put(row.record().key(), row);
                }
            }
        }
        return found;
    }
}
