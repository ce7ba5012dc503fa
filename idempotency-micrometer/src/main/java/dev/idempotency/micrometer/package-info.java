/**
 * {@link dev.idempotency.micrometer.MicrometerIdempotencyListener}: what the engine reports, as
 * Micrometer timers and counters, for any framework (the Spring Boot auto-configuration and the
 * Quarkus module give it to their engine when the application has a {@code MeterRegistry}). Stable.
 *
 * <p>Nullness: {@code @NullMarked} (JSpecify), so a type without {@code @Nullable} excludes
 * {@code null}. The annotations are an optional dependency.
 */
@NullMarked
package dev.idempotency.micrometer;

import org.jspecify.annotations.NullMarked;
