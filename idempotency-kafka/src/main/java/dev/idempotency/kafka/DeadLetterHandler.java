package dev.idempotency.kafka;

import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Where a record goes that will not be processed: one whose failure was recorded as final (after the
 * consumer's attempts, or at once for a failure the key policy declares final), or one without a
 * message id. Called after the failure's commit and before the record's offset is committed, so a
 * crash in between calls it again for the redelivered record: the hand-off is at least once, and a
 * handler that publishes to a dead-letter topic should give the copy the record's message id.
 * A handler that throws stops the batch: the offset is not committed, and the record comes again.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
@FunctionalInterface
public interface DeadLetterHandler<K, V> {

    /**
     * @param <K> the record key type
     * @param <V> the record value type
     * @return a handler that logs the record's position and the reason, at warn, and drops it
     */
    static <K, V> DeadLetterHandler<K, V> logging() {
        return (record, reason) -> IdempotentConsumer.log.warn("Dead letter {}: {}", IdempotentConsumer.position(record), reason.getMessage());
    }

    /**
     * @param record the record
     * @param reason why: a {@link dev.idempotency.RecordedFailureException} with the recorded failure
     *     (the same on every redelivery), or a {@link MissingMessageIdException}
     * @throws Exception any failure: the record's offset is not committed
     */
    void deadLetter(ConsumerRecord<K, V> record, Exception reason) throws Exception;
}
