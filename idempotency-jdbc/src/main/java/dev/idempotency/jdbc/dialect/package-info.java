/**
 * SQL dialects: {@link dev.idempotency.jdbc.dialect.SqlDialect} answers in standard SQL, and one
 * small subclass per database overrides what differs. Stable for users who choose a dialect
 * explicitly; subclassing it is supported: the protected questions (the SQL a statement takes, the
 * classification of errors, how a lock wait is bounded, the dialect's traits) are what a subclass
 * answers, while an override of a public operation (the claim, the completion, the lease
 * operations) may need changes between minor releases.
 *
 * <p>Nullness: {@code @NullMarked} (JSpecify), so a type without {@code @Nullable} excludes
 * {@code null}. The annotations are an optional dependency: code that uses this package compiles
 * and runs without {@code org.jspecify:jspecify}.
 */
@NullMarked
package dev.idempotency.jdbc.dialect;

import org.jspecify.annotations.NullMarked;
