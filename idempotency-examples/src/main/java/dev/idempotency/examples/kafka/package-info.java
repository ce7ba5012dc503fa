/**
 * An idempotent Kafka consumer ({@link dev.idempotency.kafka.IdempotentConsumer}) writing payments
 * to H2, against a real broker: a producer that sends one message twice, and a consumer that dies
 * before its offset commit, and one effect per message all the same. Run it with a broker from
 * {@code scripts/kafka.sh start}; see docs/message-consumers.md.
 */
package dev.idempotency.examples.kafka;
