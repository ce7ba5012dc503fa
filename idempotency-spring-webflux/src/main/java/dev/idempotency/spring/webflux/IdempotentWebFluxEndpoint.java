package dev.idempotency.spring.webflux;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes a Spring WebFlux handler method idempotent by the {@code Idempotency-Key} header, with the
 * rules of {@link dev.idempotency.http.HttpIdempotency}: 400 for a missing or malformed key, 409 with
 * {@code Retry-After} while the first attempt runs, 422 for the key reused on another request, and the
 * first response (status, body, the replayed headers) sent again with {@code Idempotent-Replayed: true}
 * to every retry.
 *
 * <p>The method runs, and its response is recorded, in one R2DBC transaction that
 * {@link IdempotencyWebFilter} begins through Spring's reactive transaction manager: a
 * {@code DatabaseClient} or {@code R2dbcEntityTemplate} on the same {@code ConnectionFactory}, and
 * {@code @Transactional} services, join it, so the method's writes and its recorded response commit
 * together, or neither does. The key's scope is the authenticated client ({@link WebFluxScope}).
 * On a type, every handler method of the controller is idempotent.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ ElementType.METHOD, ElementType.TYPE })
public @interface IdempotentWebFluxEndpoint {
}
