/**
 * Spring MVC: {@link dev.idempotency.spring.webmvc.IdempotentEndpoint} on a controller method makes it
 * idempotent by the {@code Idempotency-Key} header, applied by
 * {@link dev.idempotency.spring.webmvc.IdempotencyFilter}. Without Spring Boot,
 * {@link dev.idempotency.spring.webmvc.EnableIdempotentEndpoints} defines the filter; with Boot,
 * {@code idempotency-spring-boot-autoconfigure} does. Public API, stable.
 */
@NullMarked
package dev.idempotency.spring.webmvc;

import org.jspecify.annotations.NullMarked;
