package dev.idempotency.faults;

import dev.idempotency.jdbc.JdbcIdempotencyStore;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * The keyed operation every fault test runs: in the caller's transaction, the work inserts one
 * business row (the key and a value unique to this execution) into {@value #EFFECTS}, which has no
 * unique constraint, so that a second execution of a key shows as a second row; the value is the
 * operation's result, recorded with the key.
 */
final class Workload {

    static final String EFFECTS = "fault_effect";

    private Workload() {
    }

    static void createTables(DataSource ds, JdbcIdempotencyStore store) throws SQLException {
        createTables(ds, store, EFFECTS, "effect VARCHAR(200) NOT NULL");
    }

    /** Creates the store's table and a business table {@code table} of scope, key and {@code columns}, if missing. */
    static void createTables(DataSource ds, JdbcIdempotencyStore store, String table, String columns) throws SQLException {
        store.createTableIfMissing(ds);
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS " + table + " (scope VARCHAR(64) NOT NULL, key_id VARCHAR(255) NOT NULL, " + columns + ")");
            if (!c.getAutoCommit()) {
                c.commit();
            }
        }
    }

    /** The work: one business row, in {@code c}'s transaction. */
    static void insertEffect(Connection c, String scope, String key, String value) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("INSERT INTO " + EFFECTS + " (scope, key_id, effect) VALUES (?, ?, ?)")) {
            s.setString(1, scope);
            s.setString(2, key);
            s.setString(3, value);
            s.executeUpdate();
        }
    }

    /** @return the business rows and records of {@code scope} */
    static DatabaseState read(DataSource ds, JdbcIdempotencyStore store, String scope) throws SQLException {
        Map<String, List<String>> effects = new HashMap<>();
        try (Connection c = ds.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT key_id, effect FROM " + EFFECTS + " WHERE scope = ?")) {
            s.setString(1, scope);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    effects.computeIfAbsent(rs.getString(1), k -> new ArrayList<>()).add(rs.getString(2));
                }
            }
            if (!c.getAutoCommit()) {
                c.rollback();
            }
        }
        return new DatabaseState(effects, records(ds, store, scope));
    }

    /** @return the idempotency records of {@code scope}, by key */
    static Map<String, DatabaseState.Record> records(DataSource ds, JdbcIdempotencyStore store, String scope) throws SQLException {
        Map<String, DatabaseState.Record> records = new HashMap<>();
        try (Connection c = ds.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT key_id, status, result FROM " + store.table().qualified() + " WHERE scope = ?")) {
            s.setString(1, scope);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    byte[] result = rs.getBytes(3);
                    records.put(rs.getString(1), new DatabaseState.Record(rs.getString(2),
                            result == null ? null : new String(result, StandardCharsets.UTF_8)));
                }
            }
            if (!c.getAutoCommit()) {
                c.rollback();
            }
        }
        return records;
    }
}
