package dev.idempotency.kafka;

import java.util.Collection;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;

/**
 * Where the consumer keeps the next offset of each partition it processes, in the database of its
 * records: written in the transaction that records each record's key, so that the offsets and the
 * effects are committed together, and read back when partitions are assigned
 * ({@link IdempotentConsumer#rebalanceListener}), to seek to them. {@link JdbcOffsetStore} is the
 * JDBC one. Implementations must be thread-safe.
 *
 * @param <C> the transaction type
 */
public interface OffsetStore<C> {

    /**
     * Sets the partition's next offset, in the open transaction, unless the one stored is already
     * larger (a member that lost the partition must not move it back).
     *
     * @param tx the transaction of the record's key
     * @param group the consumer group
     * @param partition the record's partition
     * @param nextOffset the offset after the record's
     */
    void save(C tx, String group, TopicPartition partition, long nextOffset);

    /**
     * Reads the stored next offsets, in a transaction of its own, creating the rows of partitions
     * that have none (without an offset: they start where Kafka's committed offset says).
     *
     * @param group the consumer group
     * @param partitions the partitions just assigned
     * @return the next offset of each partition that has one stored
     */
    Map<TopicPartition, Long> load(String group, Collection<TopicPartition> partitions);
}
