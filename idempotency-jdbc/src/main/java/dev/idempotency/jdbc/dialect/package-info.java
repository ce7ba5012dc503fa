/**
 * SQL dialects: a {@link dev.idempotency.jdbc.dialect.SqlDialect} is a description of its database
 * (SQL texts, error classification over {@link dev.idempotency.jdbc.dialect.SqlError}, the clock
 * query, the durability questions, strategy values such as
 * {@link dev.idempotency.jdbc.dialect.ClaimStrategy}, {@link dev.idempotency.jdbc.dialect.ChunkClaiming}
 * and {@link dev.idempotency.jdbc.dialect.LockWait}), and runs nothing: the store's one executor,
 * in a package that is not exported, runs every algorithm for every database, reading it. The base
 * class answers in standard SQL; each database's subclass answers only what differs.
 *
 * <p>Stable, for a dialect of one's own (a database this library does not ship, from one's own
 * project): every public member of {@code SqlDialect} and of the types it describes with. None
 * names a {@code java.sql} type.
 *
 * <p>Nullness: {@code @NullMarked} (JSpecify), so a type without {@code @Nullable} excludes
 * {@code null}. The annotations are an optional dependency: code that uses this package compiles
 * and runs without {@code org.jspecify:jspecify}.
 */
@NullMarked
package dev.idempotency.jdbc.dialect;

import org.jspecify.annotations.NullMarked;
