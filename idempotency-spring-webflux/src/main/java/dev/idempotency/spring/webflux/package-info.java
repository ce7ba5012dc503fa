/**
 * The {@code Idempotency-Key} header for Spring WebFlux handler methods annotated
 * {@link dev.idempotency.spring.webflux.IdempotentWebFluxEndpoint}, applied by
 * {@link dev.idempotency.spring.webflux.IdempotencyWebFilter} without blocking, with the handler's
 * R2DBC writes and the key's record in one reactive transaction.
 */
@NullMarked
package dev.idempotency.spring.webflux;

import org.jspecify.annotations.NullMarked;
