/**
 * The JDBC store: {@link dev.idempotency.jdbc.Idempotent} (the zero-configuration entry point),
 * {@link dev.idempotency.jdbc.JdbcIdempotencyStore} and
 * {@link dev.idempotency.jdbc.RetryableFailures}. Stable: changes follow semantic versioning.
 *
 * <p>Nullness: {@code @NullMarked} (JSpecify), so a type without {@code @Nullable} excludes
 * {@code null}. The annotations are an optional dependency: code that uses this package compiles
 * and runs without {@code org.jspecify:jspecify}.
 *
 * <p>The exceptions here are not meant to be serialized (the library never uses Java
 * serialization); their serialized form is no API.
 *
 * @serial exclude
 */
@NullMarked
package dev.idempotency.jdbc;

import org.jspecify.annotations.NullMarked;
