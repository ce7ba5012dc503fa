package dev.idempotency.kafka;

import java.util.Objects;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.jspecify.annotations.Nullable;

/**
 * Where the id of a record's idempotency key comes from; the key's scope is the consumer group
 * ({@link IdempotentConsumer}). Two choices come with the module:
 * <ul>
 *   <li>{@link #header()}: a message id that the producer sets in the header
 *       {@value #DEFAULT_HEADER} once per logical message, before the first send. A producer that
 *       retries a send, or sends the message again after a crash, sends the same id, so the second
 *       copy (at another offset) replays. <b>The default, and the one to choose</b> whenever the
 *       producer can set it.</li>
 *   <li>{@link #position()}: the record's topic, partition and offset. It needs nothing from the
 *       producer, and deduplicates every redelivery of the same record (a crash before the offset
 *       commit, a rebalance), <b>but not a producer's retry</b>: a second send of the same message
 *       is a new record at a new offset, and is processed again.</li>
 * </ul>
 * An application may derive the id from the payload instead (an order number, say) with a lambda.
 * Implementations must be thread-safe and stateless.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
@FunctionalInterface
public interface MessageIds<K, V> {

    /** The header that {@link #header()} reads. */
    String DEFAULT_HEADER = "idempotency-message-id";

    /**
     * @param record a record
     * @return the id of its key; {@code null} if the record carries none (it is then handed to the
     *     dead-letter handler with a {@link MissingMessageIdException})
     */
    @Nullable String idOf(ConsumerRecord<K, V> record);

    /**
     * @param <K> the record key type
     * @param <V> the record value type
     * @return the ids from the header {@value #DEFAULT_HEADER}, read as UTF-8
     */
    static <K, V> MessageIds<K, V> header() {
        return header(DEFAULT_HEADER);
    }

    /**
     * @param name the header that carries the message id (its last value counts)
     * @param <K> the record key type
     * @param <V> the record value type
     * @return the ids from that header, read as UTF-8
     */
    static <K, V> MessageIds<K, V> header(String name) {
        return new HeaderMessageIds<>(Objects.requireNonNull(name, "name"));
    }

    /**
     * The record's position as its id, {@code topic-partition@offset}: survives every redelivery of
     * the record, but not a producer's retry (see the class comment).
     *
     * @param <K> the record key type
     * @param <V> the record value type
     * @return the ids from the records' positions
     */
    static <K, V> MessageIds<K, V> position() {
        return IdempotentConsumer::position;
    }
}
