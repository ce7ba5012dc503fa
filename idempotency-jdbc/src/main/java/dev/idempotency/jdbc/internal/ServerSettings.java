package dev.idempotency.jdbc.internal;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.jdbc.dialect.SqlDialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * What the executor asks a database's server about its settings, as the dialect describes the
 * questions: whether commits are durable ({@link SqlDialect#durabilityQueries()}) and the largest
 * statement it accepts ({@link SqlDialect#statementLimitQuery()}, read once per physical connection
 * and kept by the store's own {@link StatementLimits}). Holds no state; thread-safe.
 */
final class ServerSettings {

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
    static Optional<PacketOverflow> packetOverflow(SqlDialect d, StatementLimits limits, Connection c, IdempotencyKey key,
                                                   String codec, byte @Nullable [] value) throws SQLException {
        String query = d.statementLimitQuery();
        if (query == null || value == null) {
            return Optional.empty();
        }
        long size = d.statementBytes(key, codec, value);
        long limit = limits.of(c, query);
        return size > limit ? Optional.of(new PacketOverflow(size, limit, d.statementLimitSetting())) : Optional.empty();
    }
}
