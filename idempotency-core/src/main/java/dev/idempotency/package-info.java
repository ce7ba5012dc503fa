/**
 * The API a caller touches: {@link dev.idempotency.Idempotency} (the engine),
 * {@link dev.idempotency.IdempotencyKey}, {@link dev.idempotency.KeyPolicy},
 * {@link dev.idempotency.Fingerprint}, {@link dev.idempotency.Outcome} and
 * {@link dev.idempotency.ResultCodec}. Stable: changes follow semantic versioning.
 */
package dev.idempotency;
