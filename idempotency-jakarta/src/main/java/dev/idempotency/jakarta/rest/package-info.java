/**
 * The {@code Idempotency-Key} header on any Jakarta REST runtime: {@link dev.idempotency.jakarta.rest.IdempotencyRestFeature}
 * and the {@link dev.idempotency.jakarta.rest.IdempotentResource} name binding.
 */
@NullMarked
package dev.idempotency.jakarta.rest;

import org.jspecify.annotations.NullMarked;
