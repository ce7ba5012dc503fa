/**
 * The transactional mode on R2DBC: {@link dev.idempotency.r2dbc.R2dbcIdempotency} claims the key,
 * runs the work and records its result in the caller's R2DBC transaction, without blocking, on the
 * databases whose dialects it runs (H2, PostgreSQL, MariaDB).
 */
package dev.idempotency.r2dbc;
