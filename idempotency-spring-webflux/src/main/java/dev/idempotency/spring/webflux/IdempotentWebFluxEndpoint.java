package dev.idempotency.spring.webflux;

import dev.idempotency.http.ServerErrors;
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
 *
 * <p>A 5xx the method answers is recorded and replayed like any status, unless the filter's layer
 * releases server errors ({@code idempotency.http.server-errors=release} under Boot) or the
 * annotation says so for its method: {@code @IdempotentWebFluxEndpoint(serverErrors = ServerErrors.RELEASE)}.
 * A released 5xx is sent, its transaction rolled back with the method's writes, and the retry runs
 * the method again.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ ElementType.METHOD, ElementType.TYPE })
public @interface IdempotentWebFluxEndpoint {

    /**
     * What to do with a 5xx this handler answers: empty (the default) for the layer's choice
     * ({@code HttpIdempotency.serverErrors()}); one value to decide for this handler (or, on a type,
     * for the controller's methods that do not say). More than one is refused at the request.
     *
     * @return the choice, or none for the layer's
     */
    ServerErrors[] serverErrors() default {};
}
