/**
 * Spring MVC: {@link dev.idempotency.spring.webmvc.IdempotentEndpoint} on a controller method makes it
 * idempotent by the {@code Idempotency-Key} header, applied by
 * {@link dev.idempotency.spring.webmvc.IdempotencyFilter}, with Boot auto-configuration in
 * {@link dev.idempotency.spring.webmvc.IdempotencyWebMvcAutoConfiguration}. Public API, stable.
 */
@NullMarked
package dev.idempotency.spring.webmvc;

import org.jspecify.annotations.NullMarked;
