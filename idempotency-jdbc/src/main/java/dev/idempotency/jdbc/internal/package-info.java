/**
 * Implementation details of the JDBC store, chief among them its one executor
 * ({@link dev.idempotency.jdbc.internal.JdbcExecutor}), which runs every algorithm as a dialect
 * describes it. Not an API: anything here may change in any release.
 */
package dev.idempotency.jdbc.internal;
