package dev.idempotency.jdbc.internal;

import dev.idempotency.jdbc.dialect.SqlDialect;
import dev.idempotency.jdbc.dialect.TableName;
import dev.idempotency.spi.RecordStatus;
import java.time.Duration;
import java.util.function.UnaryOperator;

/**
 * The statements of the transactional mode that every dialect shares, in standard SQL with
 * {@code ?} parameters, written once for every executor: the JDBC one, and the R2DBC one, which
 * translates the placeholders to its driver's. The dialect's own statements
 * ({@link SqlDialect#claimInsert}, {@link SqlDialect#claimStatement}, ...) complete them. Stateless
 * and thread-safe.
 */
public final class Statements {

    private Statements() {
    }

    /**
     * @param table the table
     * @param suffix a locking read ({@link SqlDialect#lockingRead}), or the empty string
     * @return the read of one record in {@link SqlDialect#COLUMNS} order, binding scope (1) and key id (2)
     */
    public static String select(TableName table, String suffix) {
        return "SELECT " + SqlDialect.COLUMNS + " FROM " + table + " WHERE scope = ? AND key_id = ?" + suffix;
    }

    /**
     * @param table the table
     * @return the take-over of an expired record as a claim of the transactional modes, binding the
     *     new fingerprint, status, claim time and expiry, then scope and key id, then the instants at
     *     or before which the record has expired: the engine's now for a record of the transactional
     *     modes, the database's for one lease mode wrote (1 to 8); update count 1 if it took over
     */
    public static String takeOver(TableName table) {
        return "UPDATE " + table + " SET " + replacing(column -> "?", false) + " WHERE scope = ? AND key_id = ? AND ("
                + expired("", "?") + ")";
    }

    /**
     * @param value the new value of each column of the record that a claim or a completion writes
     * @param completed whether the new record is complete: else result and completion are cleared
     * @return the assignments of a statement that replaces a record whole, lease mode's columns cleared
     */
    public static String replacing(UnaryOperator<String> value, boolean completed) {
        UnaryOperator<String> outcome = completed ? value : column -> "NULL";
        return "fingerprint = " + value.apply("fingerprint") + ", status = " + value.apply("status") + ", result_codec = "
                + outcome.apply("result_codec") + ", result = " + outcome.apply("result") + ", created_at = "
                + value.apply("created_at") + ", completed_at = " + outcome.apply("completed_at") + ", expires_at = "
                + value.apply("expires_at") + ", owner_token = NULL, lease_until = NULL, phase = NULL";
    }

    /**
     * The clock rule: a record without an owner token was timed by the engine, one with a token (lease
     * mode's) by the database.
     *
     * @param table the qualifier of the columns, with its {@code .}, or the empty string
     * @param databaseNow the database's now: a parameter, or an expression of the database's clock
     * @return the condition that the record has expired, binding the engine's now (then {@code databaseNow}'s)
     */
    public static String expired(String table, String databaseNow) {
        return table + "owner_token IS NULL AND " + table + "expires_at <= ? OR " + table + "owner_token IS NOT NULL AND "
                + table + "expires_at <= " + databaseNow;
    }

    /**
     * @param lockTimeout the policy's lock timeout
     * @param most the most that the database's setting accepts
     * @return the lock timeout as a statement's text bounds a wait by: in milliseconds, at most
     *     {@code most}, at least 1 (to the databases, 0 means no limit)
     */
    public static long boundedMillis(Duration lockTimeout, Duration most) {
        return Math.max(1, lockTimeout.compareTo(most) > 0 ? most.toMillis() : lockTimeout.toMillis());
    }

    /**
     * @param table the table
     * @return the completing {@code UPDATE}, binding status, codec, result, completed and expires, then
     *     scope and key id (1 to 7); update count 1, or 0 if the claimed record is gone
     */
    public static String completion(TableName table) {
        return "UPDATE " + table + " SET " + completing("", column -> "?") + " WHERE scope = ? AND key_id = ?";
    }

    /**
     * @param table the qualifier of the record's columns, with its {@code .}, or the empty string
     * @param value the new value of each, by the name of a completion's field: status, codec, result,
     *     completed_at, expires_at
     * @return the assignments of a completion
     */
    public static String completing(String table, UnaryOperator<String> value) {
        return table + "status = " + value.apply("status") + ", " + table + "result_codec = " + value.apply("codec") + ", "
                + table + "result = " + value.apply("result") + ", " + table + "completed_at = " + value.apply("completed_at")
                + ", " + table + "expires_at = " + value.apply("expires_at");
    }

    /**
     * @param table the table
     * @return the release of a claim: the {@code DELETE} of the key's in-progress record, binding
     *     scope, key id and the in-progress status ({@link RecordStatus#IN_PROGRESS}'s name; 1 to 3)
     */
    public static String release(TableName table) {
        return "DELETE FROM " + table + " WHERE scope = ? AND key_id = ? AND status = ?";
    }
}
