package dev.idempotency.jdbc.internal;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.jdbc.dialect.SqlDialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.WeakHashMap;
import org.jspecify.annotations.Nullable;

/**
 * What the executor asks a database's server about its settings, as the dialect describes the
 * questions: whether commits are durable ({@link SqlDialect#durabilityQueries()}) and the largest
 * statement it accepts ({@link SqlDialect#statementLimitQuery()}, read once per physical connection:
 * a session's value is set from the global one when the connection opens). Thread-safe.
 */
final class ServerSettings {

    /** Each physical connection's statement limit; weak keys, so that closed connections go. */
    private static final Map<Connection, Long> LIMITS = Collections.synchronizedMap(new WeakHashMap<>());

    private ServerSettings() {
    }

    /** @see JdbcExecutor#nonDurableCommits */
    static Optional<String> nonDurableCommits(SqlDialect d, Connection c) throws SQLException {
        List<String> queries = d.durabilityQueries();
        if (queries.isEmpty()) {
            return d.nonDurableCommits(List.of());
        }
        List<@Nullable String> answers = new ArrayList<>();
        for (String query : queries) {
            try (PreparedStatement s = c.prepareStatement(query); ResultSet rs = s.executeQuery()) {
                answers.add(rs.next() ? rs.getString(1) : null);
            }
        }
        return d.nonDurableCommits(answers);
    }

    /** @see JdbcExecutor#packetOverflow */
    static Optional<PacketOverflow> packetOverflow(SqlDialect d, Connection c, IdempotencyKey key, String codec,
                                                   byte @Nullable [] value) throws SQLException {
        String query = d.statementLimitQuery();
        if (query == null || value == null) {
            return Optional.empty();
        }
        long size = d.statementBytes(key, codec, value);
        long limit = limit(c, query);
        return size > limit ? Optional.of(new PacketOverflow(size, limit, d.statementLimitSetting())) : Optional.empty();
    }

    private static long limit(Connection c, String query) throws SQLException {
        Connection physical = physical(c);
        Long known = LIMITS.get(physical);
        if (known != null) {
            return known;
        }
        try (PreparedStatement s = c.prepareStatement(query); ResultSet rs = s.executeQuery()) {
            rs.next();
            long limit = rs.getLong(1);
            LIMITS.put(physical, limit);
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
}
