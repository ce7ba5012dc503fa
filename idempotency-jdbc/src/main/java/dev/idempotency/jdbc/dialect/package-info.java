/**
 * SQL dialects: a {@link dev.idempotency.jdbc.dialect.SqlDialect} says how its database does each
 * thing, and the JDBC that does it is written once, in package-private executors that every dialect
 * shares (the claim's shapes and rounds, the chunk claims, the lease statements, the bounded lock
 * waits, the writes sent with the {@code COMMIT}, the savepoints). The base class answers in
 * standard SQL; each database's subclass answers only what differs.
 *
 * <p>Stable, for a dialect of one's own: the protected and public questions a subclass answers:
 * the name and DDL, the classification of errors, the durability check, the clock query, the SQL
 * text of the claim's insert ({@code claimInsert}), of a claiming upsert ({@code claimUpsert}), of
 * the purge, and of the writes sent with the commit ({@code completionWithCommit},
 * {@code lastWriteWithCommit}), the {@link dev.idempotency.jdbc.dialect.LockWait} its statements
 * use, and the claim's traits. The public operations the store calls ({@code claimAll},
 * {@code complete}, the lease operations, ...) are final: they run the executors. {@code claim} can
 * still be overridden, for a claim no question describes, but such an override is not stable and
 * may need changes between minor releases.
 *
 * <p>Nullness: {@code @NullMarked} (JSpecify), so a type without {@code @Nullable} excludes
 * {@code null}. The annotations are an optional dependency: code that uses this package compiles
 * and runs without {@code org.jspecify:jspecify}.
 */
@NullMarked
package dev.idempotency.jdbc.dialect;

import org.jspecify.annotations.NullMarked;
