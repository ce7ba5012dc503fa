package dev.idempotency.examples;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The business side of the demonstration: an inventory to reserve from and a ledger of charges,
 * in plain JDBC. Nothing here knows about idempotency. Not thread-safe beyond what the database
 * provides; each method works in the caller's transaction.
 */
public final class Shop {

    private Shop() {
    }

    /**
     * Creates the business tables and stocks the inventory.
     *
     * @param c a connection
     * @throws SQLException if the DDL fails
     */
    public static void createTables(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("CREATE TABLE inventory (sku VARCHAR(32) PRIMARY KEY, available INT NOT NULL)");
            s.execute("CREATE TABLE reservation (id INT AUTO_INCREMENT PRIMARY KEY, sku VARCHAR(32) NOT NULL, quantity INT NOT NULL)");
            s.execute("CREATE TABLE charge (id INT AUTO_INCREMENT PRIMARY KEY, customer VARCHAR(32) NOT NULL, cents BIGINT NOT NULL)");
            s.execute("INSERT INTO inventory VALUES ('sku-1', 10), ('sku-2', 3)");
        }
    }

    // tag::reserve[]
    /**
     * Reserves stock: decrements the inventory and writes a reservation, or answers that there is
     * not enough. Either answer is a result, recorded and replayed like any other.
     *
     * @param c the caller's connection, in a transaction
     * @param sku what to reserve
     * @param quantity how many
     * @return {@code "reservation 7: 2 x sku-1"} or {@code "insufficient inventory: ..."}
     * @throws SQLException if a statement fails
     */
    public static String reserve(Connection c, String sku, int quantity) throws SQLException {
        try (PreparedStatement take = c.prepareStatement(
                "UPDATE inventory SET available = available - ? WHERE sku = ? AND available >= ?")) {
            take.setInt(1, quantity);
            take.setString(2, sku);
            take.setInt(3, quantity);
            if (take.executeUpdate() == 0) {
                return "insufficient inventory: " + quantity + " x " + sku + " requested, " + available(c, sku) + " available";
            }
        }
        try (PreparedStatement insert = c.prepareStatement(
                "INSERT INTO reservation (sku, quantity) VALUES (?, ?)", Statement.RETURN_GENERATED_KEYS)) {
            insert.setString(1, sku);
            insert.setInt(2, quantity);
            insert.executeUpdate();
            try (ResultSet id = insert.getGeneratedKeys()) {
                id.next();
                return "reservation " + id.getInt(1) + ": " + quantity + " x " + sku;
            }
        }
    }
    // end::reserve[]

    /**
     * Charges a customer: one row in the ledger.
     *
     * @param c the caller's connection, in a transaction
     * @param customer who pays
     * @param cents how much
     * @return the charge's id, as a receipt
     * @throws SQLException if a statement fails
     */
    public static String charge(Connection c, String customer, long cents) throws SQLException {
        try (PreparedStatement insert = c.prepareStatement(
                "INSERT INTO charge (customer, cents) VALUES (?, ?)", Statement.RETURN_GENERATED_KEYS)) {
            insert.setString(1, customer);
            insert.setLong(2, cents);
            insert.executeUpdate();
            try (ResultSet id = insert.getGeneratedKeys()) {
                id.next();
                return "charge " + id.getInt(1) + ": " + cents + " cents from " + customer;
            }
        }
    }

    /**
     * @param c a connection
     * @param sku a SKU
     * @return the units still available
     * @throws SQLException if the query fails
     */
    public static int available(Connection c, String sku) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("SELECT available FROM inventory WHERE sku = ?")) {
            s.setString(1, sku);
            try (ResultSet rs = s.executeQuery()) {
                return rs.next() ? rs.getInt(1) : 0;
            }
        }
    }

    /**
     * @param c a connection
     * @param sql a {@code SELECT} of one number
     * @return that number
     * @throws SQLException if the query fails
     */
    public static long single(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
