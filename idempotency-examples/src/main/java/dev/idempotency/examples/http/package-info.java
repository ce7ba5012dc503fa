/**
 * The problem statement's demonstration as a real server: a payments API on the JDK's HTTP server
 * on 127.0.0.1 with an unprotected endpoint and one behind the {@code Idempotency-Key} layer, a
 * fault mode that loses answers after the commit, and the retrying client sending the same
 * operations to both; and a page, served at {@code /}, that sends each payment of its form to both
 * side by side and, after a reload while a payment is pending, sends it again.
 */
package dev.idempotency.examples.http;
