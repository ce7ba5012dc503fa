package dev.idempotency.kafka;

import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Where a record goes that will not be processed: one whose failure is final (after the consumer's
 * attempts, or at once for a failure the key policy declares final), or one without a message id
 * (on every delivery, since nothing can be recorded for it). A final failure is handed here once:
 * before the failure's record commits (per record, in the attempt's transaction, which then rolls
 * back while the failure is recorded in another; per batch, in the batch's transaction that records
 * it); a later delivery of the record replays the recorded failure and does not call this again. A
 * crash after the hand-off and before that commit records nothing, so the redelivered record is tried and handed off again: the hand-off is at least
 * once (the record exactly once), and a handler that publishes to a dead-letter topic should give
 * the copy the record's message id. A handler that throws rolls the record's transaction back with
 * nothing recorded and stops the batch: the offset is not committed, and the record comes again.
 * Called on the consumer's thread, with the transaction open: keep it short.
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
     * @param reason why: a {@link dev.idempotency.RecordedFailureException} with the failure being
     *     recorded (its type and message), or a {@link MissingMessageIdException}
     * @throws Exception any failure: the record's offset is not committed
     */
    void deadLetter(ConsumerRecord<K, V> record, Exception reason) throws Exception;
}
