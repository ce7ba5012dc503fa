/**
 * The Servlet filter of {@code idempotency-jakarta} in a plain Jetty 12 application over H2: a
 * payment sent twice with the same key is made once, the second answer the first one's replay.
 */
package dev.idempotency.examples.jakarta;
