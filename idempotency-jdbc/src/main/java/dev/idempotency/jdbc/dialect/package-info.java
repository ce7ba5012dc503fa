/**
 * SQL dialects: {@link dev.idempotency.jdbc.dialect.SqlDialect} answers in standard SQL, and one
 * small subclass per database overrides what differs. Stable for users who choose a dialect
 * explicitly; subclassing it is supported but may need changes between minor releases.
 */
package dev.idempotency.jdbc.dialect;
