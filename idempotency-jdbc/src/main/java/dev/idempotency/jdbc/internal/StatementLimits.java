package dev.idempotency.jdbc.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * The largest statement each server session accepts, as one store has read it: asked once per
 * physical connection (a session's value is set from the global one when the connection opens, and
 * cannot be changed in the session), then kept for that connection's life. One instance belongs to
 * one store and is shared with the copies the store makes of itself; nothing is shared between
 * stores. Its keys are weak, so that a closed connection goes with its entry.
 *
 * <p>Thread-safe.
 */
public final class StatementLimits {

    private final Map<Connection, Long> limits = Collections.synchronizedMap(new WeakHashMap<>());

    /** A store's own, empty. */
    public StatementLimits() {
    }

    /**
     * @param c the connection that will send the statement
     * @param query the dialect's question for the limit
     * @return the limit of {@code c}'s session, read once per physical connection
     * @throws SQLException if the limit cannot be read
     */
    long of(Connection c, String query) throws SQLException {
        Connection physical = physical(c);
        Long known = limits.get(physical);
        if (known != null) {
            return known;
        }
        try (PreparedStatement s = c.prepareStatement(query); ResultSet rs = s.executeQuery()) {
            rs.next();
            long limit = rs.getLong(1);
            limits.put(physical, limit);
            return limit;
        }
    }

    /** @return the driver's own connection behind a pool's proxy, which lives as long as the session */
    private static Connection physical(Connection c) {
        try {
            return c.isWrapperFor(Connection.class) ? c.unwrap(Connection.class) : c;
        } catch (SQLException notAWrapper) {
            return c;
        }
    }

    @Override
    public String toString() {
        return "StatementLimits[" + limits.size() + " sessions]";
    }
}
