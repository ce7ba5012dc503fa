package dev.idempotency.kafka;

import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * The application's processing of one record, in the open database transaction that also records
 * the record's key: its writes commit with the key, or not at all. It must not commit, roll back or
 * close the transaction. It may throw: the transaction is rolled back, and the record is tried
 * again (see {@link IdempotentConsumer}).
 *
 * @param <C> the transaction type
 * @param <K> the record key type
 * @param <V> the record value type
 */
@FunctionalInterface
public interface RecordHandler<C, K, V> {

    /**
     * @param tx the open transaction
     * @param record the record
     * @throws Exception any failure: the transaction is rolled back
     */
    void handle(C tx, ConsumerRecord<K, V> record) throws Exception;
}
