package dev.idempotency.kafka;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * The consumer's offsets in a table of the same database as its records ({@link OffsetStore}), in
 * plain SQL that H2, PostgreSQL, MariaDB, HSQLDB and SQLite all run:
 * <pre>
 * CREATE TABLE idempotency_kafka_offset (
 *   group_id VARCHAR(255) NOT NULL, topic VARCHAR(255) NOT NULL, kafka_partition INT NOT NULL,
 *   next_offset BIGINT NOT NULL, PRIMARY KEY (group_id, topic, kafka_partition))
 * </pre>
 * A row is created when its partition is first assigned ({@link #load}, next offset {@code -1}, none
 * stored), so that {@link #save}, in the record's transaction, is a single guarded {@code UPDATE}
 * that never moves the offset back. Immutable and thread-safe.
 */
public final class JdbcOffsetStore implements OffsetStore<Connection> {

    /** The table's default name. */
    public static final String DEFAULT_TABLE = "idempotency_kafka_offset";
    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?");

    private final DataSource dataSource;
    private final String table;

    private JdbcOffsetStore(DataSource dataSource, String table) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.table = Objects.requireNonNull(table, "table");
        if (!NAME.matcher(table).matches()) {
            throw new IllegalArgumentException("table must be a plain SQL name (letters, digits, '_', one optional schema), not '"
                    + table + "'");
        }
    }

    /**
     * @param dataSource the database of the records, for {@link #load} and {@link #createTableIfMissing()}
     * @return a store on the table {@value #DEFAULT_TABLE}
     */
    public static JdbcOffsetStore of(DataSource dataSource) {
        return new JdbcOffsetStore(dataSource, DEFAULT_TABLE);
    }

    /**
     * @param dataSource the database of the records
     * @param table the table's name
     * @return a store on that table
     * @throws IllegalArgumentException if the name is not a plain SQL name
     */
    public static JdbcOffsetStore of(DataSource dataSource, String table) {
        return new JdbcOffsetStore(dataSource, table);
    }

    /**
     * Creates the table if it does not exist, like the record table's {@code createTableIfMissing}.
     *
     * @throws OffsetStoreException if the database fails
     */
    public void createTableIfMissing() {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS " + table + " (group_id VARCHAR(255) NOT NULL, topic VARCHAR(255) NOT NULL, "
                    + "kafka_partition INT NOT NULL, next_offset BIGINT NOT NULL, PRIMARY KEY (group_id, topic, kafka_partition))");
        } catch (SQLException e) {
            throw new OffsetStoreException("could not create the offset table " + table, e);
        }
    }

    @Override
    public void save(Connection tx, String group, TopicPartition partition, long nextOffset) {
        try (PreparedStatement update = tx.prepareStatement("UPDATE " + table + " SET next_offset = ? "
                + "WHERE group_id = ? AND topic = ? AND kafka_partition = ? AND next_offset < ?")) {
            update.setLong(1, nextOffset);
            update.setString(2, group);
            update.setString(3, partition.topic());
            update.setInt(4, partition.partition());
            update.setLong(5, nextOffset);
            update.executeUpdate(); // 0 rows: a larger offset is stored already
        } catch (SQLException e) {
            throw new OffsetStoreException("could not store the next offset " + nextOffset + " of " + partition + " for group " + group, e);
        }
    }

    @Override
    public Map<TopicPartition, Long> load(String group, Collection<TopicPartition> partitions) {
        Map<TopicPartition, Long> offsets = new HashMap<>();
        try (Connection c = dataSource.getConnection()) {
            for (TopicPartition partition : partitions) {
                Long stored = read(c, group, partition);
                if (stored == null) {
                    insertIfMissing(c, group, partition);
                } else if (stored >= 0) {
                    offsets.put(partition, stored);
                }
            }
        } catch (SQLException e) {
            throw new OffsetStoreException("could not read the offsets of group " + group, e);
        }
        return offsets;
    }

    private @Nullable Long read(Connection c, String group, TopicPartition partition) throws SQLException {
        try (PreparedStatement q = c.prepareStatement("SELECT next_offset FROM " + table
                + " WHERE group_id = ? AND topic = ? AND kafka_partition = ?")) {
            q.setString(1, group);
            q.setString(2, partition.topic());
            q.setInt(3, partition.partition());
            try (ResultSet rs = q.executeQuery()) {
                return rs.next() ? rs.getLong(1) : null;
            }
        }
    }

    private void insertIfMissing(Connection c, String group, TopicPartition partition) throws SQLException {
        try (PreparedStatement insert = c.prepareStatement("INSERT INTO " + table
                + " (group_id, topic, kafka_partition, next_offset) VALUES (?, ?, ?, -1)")) {
            insert.setString(1, group);
            insert.setString(2, partition.topic());
            insert.setInt(3, partition.partition());
            insert.executeUpdate();
        } catch (SQLException e) {
            if (read(c, group, partition) == null) { // not another member's insert of the same row
                throw e;
            }
        }
    }

    @Override
    public String toString() {
        return "JdbcOffsetStore[" + table + "]";
    }

    /** The offset table could not be read or written; the cause is the database's exception. */
    public static final class OffsetStoreException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        OffsetStoreException(String message, SQLException cause) {
            super(message + ": " + cause.getMessage(), cause);
        }
    }
}
