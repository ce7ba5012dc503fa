/**
 * Spring for Apache Kafka adapter. {@link dev.idempotency.spring.kafka.SpringKafkaIdempotency} makes
 * the {@code @KafkaListener} record and batch listeners of a Spring application idempotent with the
 * consumers of {@code idempotency-kafka}: each record's key, scoped by the consumer group, is
 * recorded in the listener's database transaction (run through Spring's transaction manager), the
 * container commits the offset after it, and poison records are retried by Spring's
 * {@code DefaultErrorHandler}, recorded final and published to a dead-letter topic. Stable: changes
 * follow semantic versioning.
 *
 * <p>Nullness: {@code @NullMarked} (JSpecify), so a type without {@code @Nullable} excludes
 * {@code null}.
 */
@NullMarked
package dev.idempotency.spring.kafka;

import org.jspecify.annotations.NullMarked;
