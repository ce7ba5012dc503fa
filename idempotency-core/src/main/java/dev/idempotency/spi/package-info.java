/**
 * The service-provider interface for store authors: {@link dev.idempotency.spi.IdempotencyStore}
 * and the values it exchanges with the engine. Stable: changes follow semantic versioning.
 * Prove a store with {@code idempotency-testkit}.
 */
package dev.idempotency.spi;
