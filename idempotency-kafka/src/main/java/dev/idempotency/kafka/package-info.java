/**
 * Idempotent Kafka consumers. {@link dev.idempotency.kafka.IdempotentConsumer} wraps the handler of
 * a plain {@code KafkaConsumer} poll loop: each record's key, from a {@link dev.idempotency.kafka.MessageIds}
 * extractor and scoped by the consumer group, is recorded in the database transaction of the
 * handler's own writes, and the offset is committed to Kafka only after that commit. A record
 * delivered again (a crash before the offset commit, a rebalance) or sent again (a producer's retry)
 * replays instead of running the handler twice; a record that keeps failing is retried a bounded
 * number of times, then recorded as failed for good and handed to a
 * {@link dev.idempotency.kafka.DeadLetterHandler}. Stable: changes follow semantic versioning.
 *
 * <p>Nullness: {@code @NullMarked} (JSpecify), so a type without {@code @Nullable} excludes
 * {@code null}.
 */
@NullMarked
package dev.idempotency.kafka;

import org.jspecify.annotations.NullMarked;
