/**
 * The API a caller touches: {@link dev.idempotency.Idempotency} (the engine),
 * {@link dev.idempotency.IdempotencyKey}, {@link dev.idempotency.IdempotentCall} (a call: key, fingerprint, codec),
 * {@link dev.idempotency.KeyPolicy},
 * {@link dev.idempotency.Fingerprint}, {@link dev.idempotency.Outcome} and
 * {@link dev.idempotency.ResultCodec}. Stable: changes follow semantic versioning.
 *
 * <p>Nullness: {@code @NullMarked} (JSpecify), so a type without {@code @Nullable} excludes
 * {@code null}. The annotations are an optional dependency: code that uses this package compiles
 * and runs without {@code org.jspecify:jspecify}.
 *
 * <p>The exceptions are {@code Serializable} only because {@link java.lang.Throwable} is; their
 * serialized form is no API.
 *
 * @serial exclude
 */
@NullMarked
package dev.idempotency;

import org.jspecify.annotations.NullMarked;
