/**
 * The {@code Idempotency-Key} header as a Jakarta Servlet filter:
 * {@link dev.idempotency.jakarta.servlet.IdempotencyServletFilter}.
 */
@NullMarked
package dev.idempotency.jakarta.servlet;

import org.jspecify.annotations.NullMarked;
