/**
 * Spring Boot auto-configuration: with this module on the class path and one {@code DataSource} in
 * the application, the context holds an {@link dev.idempotency.Idempotency} engine on the
 * application's data source, a {@link dev.idempotency.spring.SpringIdempotency} for
 * {@code @Transactional} methods, and, with a transaction manager, a
 * {@link dev.idempotency.ManagedIdempotency} whose transactions Spring runs. Properties under
 * {@code idempotency.*} ({@link dev.idempotency.spring.boot.autoconfigure.IdempotencyProperties})
 * set the table and the key policy; with Micrometer, a
 * {@link dev.idempotency.micrometer.MicrometerIdempotencyListener} publishes metrics.
 * With {@code idempotency.store=redis} or {@code dynamodb} (or, without a {@code DataSource}, a
 * Lettuce {@code RedisClient} or an AWS SDK {@code DynamoDbClient} bean) the engine is on that store
 * instead, for lease mode and phases ({@link dev.idempotency.spring.boot.autoconfigure.IdempotencyLeaseModeAutoConfiguration}).
 * Every bean backs off when the application defines its own. Stable.
 *
 * <p>Nullness: {@code @NullMarked} (JSpecify), so a type without {@code @Nullable} excludes
 * {@code null}. The annotations are an optional dependency.
 */
@NullMarked
package dev.idempotency.spring.boot.autoconfigure;

import org.jspecify.annotations.NullMarked;
