/**
 * The Jdbi adapter: {@link dev.idempotency.jdbi.JdbiIdempotencyStore} makes a store that keeps
 * key records through a Jdbi {@link org.jdbi.v3.core.Handle}'s connection, inside the handle's
 * transaction, {@link dev.idempotency.jdbi.JdbiIdempotency} builds an engine on it, and
 * {@link dev.idempotency.jdbi.JdbiTransactions} runs transactions of the library's own through a
 * {@link org.jdbi.v3.core.Jdbi} instance. The records are the JDBC store's
 * ({@code idempotency-jdbc}), written with its dialects and table. Stable.
 *
 * <p>Nullness: {@code @NullMarked} (JSpecify), so a type without {@code @Nullable} excludes
 * {@code null}. The annotations are an optional dependency: code that uses this package compiles
 * and runs without {@code org.jspecify:jspecify}.
 */
@NullMarked
package dev.idempotency.jdbi;

import org.jspecify.annotations.NullMarked;
