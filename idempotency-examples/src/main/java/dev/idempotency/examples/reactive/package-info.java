/**
 * The transactional mode without blocking: orders placed once per key in the caller's R2DBC
 * transaction, on embedded H2 through r2dbc-h2, with a retry replayed, a reused key refused and
 * concurrent duplicates run once.
 */
package dev.idempotency.examples.reactive;
