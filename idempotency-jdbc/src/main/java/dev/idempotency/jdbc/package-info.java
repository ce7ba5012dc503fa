/**
 * The JDBC store: {@link dev.idempotency.jdbc.Idempotent} (the zero-configuration entry point),
 * {@link dev.idempotency.jdbc.JdbcIdempotencyStore} and
 * {@link dev.idempotency.jdbc.RetryableFailures}. Stable: changes follow semantic versioning.
 */
package dev.idempotency.jdbc;
