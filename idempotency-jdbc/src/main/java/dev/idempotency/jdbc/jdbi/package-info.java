/**
 * The Jdbi adapter: {@link dev.idempotency.jdbc.jdbi.JdbiIdempotencyStore} makes a store that keeps
 * key records through a Jdbi {@link org.jdbi.v3.core.Handle}'s connection, inside the handle's
 * transaction, and
 * {@link dev.idempotency.jdbc.jdbi.JdbiIdempotency} builds an engine on it. Jdbi
 * ({@code org.jdbi:jdbi3-core}) is an optional dependency of this module: only this package refers to
 * it, so add Jdbi to your own build to use it. Stable.
 *
 * <p>Nullness: {@code @NullMarked} (JSpecify), so a type without {@code @Nullable} excludes
 * {@code null}. The annotations are an optional dependency: code that uses this package compiles
 * and runs without {@code org.jspecify:jspecify}.
 */
@NullMarked
package dev.idempotency.jdbc.jdbi;

import org.jspecify.annotations.NullMarked;
