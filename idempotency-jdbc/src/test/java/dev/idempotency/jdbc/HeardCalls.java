package dev.idempotency.jdbc;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.Outcome;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;

/**
 * Test helper: a listener that writes down every call it gets, in order, as {@code "id:STATUS"},
 * {@code "id:error:SimpleClassName"} and {@code "id:retry:attempt"}. An {@code EXECUTED} outcome
 * heard while the key's completed record cannot yet be read from another connection (it is not
 * committed) is written {@code "id:EXECUTED before its commit"}.
 */
final class HeardCalls implements IdempotencyListener {

    private final DataSource dataSource;
    private final String table;
    private final List<String> calls = new CopyOnWriteArrayList<>();

    /**
     * @param dataSource where the records are read, each time on a connection of its own
     * @param table the record table
     */
    HeardCalls(DataSource dataSource, String table) {
        this.dataSource = dataSource;
        this.table = table;
    }

    /** @return the calls so far, in order */
    List<String> calls() {
        return List.copyOf(calls);
    }

    /** Forgets the calls so far. */
    void clear() {
        calls.clear();
    }

    @Override
    public void onOutcome(IdempotencyKey key, Outcome.Status status, Duration elapsed) {
        String heard = key.id() + ":" + status;
        calls.add(status == Outcome.Status.EXECUTED && !committed(key) ? heard + " before its commit" : heard);
    }

    @Override
    public void onError(IdempotencyKey key, Throwable failure, Duration elapsed) {
        calls.add((key == null ? "null" : key.id()) + ":error:" + failure.getClass().getSimpleName());
    }

    @Override
    public void onRetry(IdempotencyKey key, int attempt, Throwable failure, Duration backoff) {
        calls.add((key == null ? "null" : key.id()) + ":retry:" + attempt);
    }

    private boolean committed(IdempotencyKey key) {
        try (Connection c = dataSource.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT COUNT(*) FROM " + table
                     + " WHERE scope = ? AND key_id = ? AND status <> 'IN_PROGRESS'")) {
            s.setString(1, key.scope());
            s.setString(2, key.id());
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getInt(1) > 0;
            }
        } catch (SQLException e) {
            throw new IllegalStateException("could not read the record of " + key, e);
        }
    }
}
