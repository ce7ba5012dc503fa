/**
 * The contract any {@link dev.idempotency.spi.IdempotencyStore} must pass, for store authors.
 */
package dev.idempotency.testkit;
