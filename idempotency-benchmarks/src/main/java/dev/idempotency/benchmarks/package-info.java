/**
 * JMH benchmarks of the JDBC store against a plain transaction, on every supported database, with
 * the counting pass that reports statements per operation and the report that turns JMH's JSON
 * into a Markdown table. Not part of the library's API; run with {@code scripts/bench}.
 */
package dev.idempotency.benchmarks;
