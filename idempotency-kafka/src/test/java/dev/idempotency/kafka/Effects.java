package dev.idempotency.kafka;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.KeyPolicy;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.jdbc.Idempotent;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.jdbc.JdbcTransactions;
import dev.idempotency.spi.TransactionRunner;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * The business side of the tests: a table of effects, one row per handler run that committed
 * (with no unique constraint, so that a second effect shows as a second row), the engine over the
 * same database, and the duplicates its listener heard.
 */
public final class Effects {

    public final DataSource dataSource;
    final List<String> duplicates = new ArrayList<>();
    final List<String> outcomes = new ArrayList<>();
    final List<String> errors = new ArrayList<>();

    public Effects(DataSource dataSource) throws SQLException {
        this.dataSource = dataSource;
        JdbcIdempotencyStore.ofDefaults().createTableIfMissing(dataSource);
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS consumer_effect (grp VARCHAR(200) NOT NULL, message_id VARCHAR(200) NOT NULL, "
                    + "position VARCHAR(200) NOT NULL)");
        }
    }

    /** Deletes every effect and record, for a database that outlives the test (a server). */
    public void clear() throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("DELETE FROM consumer_effect");
            s.execute("DELETE FROM idempotency_record");
        }
    }

    /** @return an engine whose key policy declares poison messages final, and whose listener notes duplicates */
    public ManagedIdempotency<Connection> engine() {
        return engine(JdbcTransactions.of(dataSource));
    }

    /** @return the same engine, its transactions run by {@code transactions} (Spring's, say) */
    public ManagedIdempotency<Connection> engine(TransactionRunner<Connection> transactions) {
        Idempotency<Connection> engine = Idempotent.builder()
                .keyPolicy(KeyPolicy.builder().finalFailures(PoisonMessageException.class).build()).listener(listener()).build();
        return ManagedIdempotency.of(engine, transactions);
    }

    /**
     * @return the listener that notes each duplicate as {@code "<message id> <cause>"}, each outcome as
     *     {@code "<message id> <status>"} and each error as {@code "<message id> <exception class>: <message>"}
     */
    public IdempotencyListener listener() {
        return new IdempotencyListener() {
            @Override
            public void onDuplicate(IdempotencyKey key, String cause) {
                note(duplicates, key.id() + " " + cause);
            }

            @Override
            public void onOutcome(IdempotencyKey key, Outcome.Status status, Duration elapsed) {
                note(outcomes, key.id() + " " + status);
            }

            @Override
            public void onError(IdempotencyKey key, Throwable failure, Duration elapsed) {
                note(errors, (key == null ? null : key.id()) + " " + failure.getClass().getSimpleName() + ": " + failure.getMessage());
            }
        };
    }

    private static void note(List<String> heard, String what) {
        synchronized (heard) {
            heard.add(what);
        }
    }

    /** The handler's write: one effect row, in the transaction of the record's key. */
    public static void write(Connection tx, String group, ConsumerRecord<String, String> record) throws SQLException {
        try (PreparedStatement insert = tx.prepareStatement("INSERT INTO consumer_effect (grp, message_id, position) VALUES (?, ?, ?)")) {
            insert.setString(1, group);
            insert.setString(2, record.key());
            insert.setString(3, IdempotentConsumer.position(record));
            insert.executeUpdate();
        }
    }

    /** @return the number of effect rows of each message id, in the group */
    public Map<String, Integer> counts(String group) throws SQLException {
        Map<String, Integer> counts = new HashMap<>();
        try (Connection c = dataSource.getConnection();
             PreparedStatement q = c.prepareStatement("SELECT message_id, COUNT(*) FROM consumer_effect WHERE grp = ? GROUP BY message_id")) {
            q.setString(1, group);
            try (ResultSet rs = q.executeQuery()) {
                while (rs.next()) {
                    counts.put(rs.getString(1), rs.getInt(2));
                }
            }
        }
        return counts;
    }

    /** @return the keys of the group that are recorded but not completed (claimed and never finished) */
    public int inProgress(String group) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement q = c.prepareStatement("SELECT COUNT(*) FROM idempotency_record WHERE scope = ? AND status = 'IN_PROGRESS'")) {
            q.setString(1, group);
            try (ResultSet rs = q.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    public List<String> duplicates() {
        return copy(duplicates);
    }

    /** @return the outcomes the listener heard, {@code "<message id> <status>"} */
    public List<String> outcomes() {
        return copy(outcomes);
    }

    /** @return the errors the listener heard, {@code "<message id> <exception class>: <message>"} */
    public List<String> errors() {
        return copy(errors);
    }

    /** @return the status of each recorded key of the group, by message id */
    public Map<String, String> statuses(String group) throws SQLException {
        Map<String, String> statuses = new HashMap<>();
        try (Connection c = dataSource.getConnection();
             PreparedStatement q = c.prepareStatement("SELECT key_id, status FROM idempotency_record WHERE scope = ?")) {
            q.setString(1, group);
            try (ResultSet rs = q.executeQuery()) {
                while (rs.next()) {
                    statuses.put(rs.getString(1), rs.getString(2));
                }
            }
        }
        return statuses;
    }

    private static List<String> copy(List<String> heard) {
        synchronized (heard) {
            return List.copyOf(heard);
        }
    }
}
