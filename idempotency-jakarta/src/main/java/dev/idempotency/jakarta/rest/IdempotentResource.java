package dev.idempotency.jakarta.rest;

import dev.idempotency.http.ServerErrors;
import jakarta.ws.rs.NameBinding;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Puts a Jakarta REST resource method (or every method of a resource class) under the
 * {@code Idempotency-Key} header: the filters of {@link IdempotencyRestFeature} run for it, and for
 * no other method.
 *
 * <p>A 5xx the method answers is recorded and replayed like any status, unless the feature (or its
 * layer) releases server errors ({@link IdempotencyRestFeature.Builder#serverErrors}) or the
 * annotation says so for its method: {@code @IdempotentResource(serverErrors = ServerErrors.RELEASE)}.
 * A released 5xx is sent, the request's JTA transaction rolled back with the method's writes, and
 * the retry runs the method again.
 */
@NameBinding
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
public @interface IdempotentResource {

    /**
     * What to do with a 5xx this method answers: empty (the default) for the feature's choice; one
     * value to decide for this method (or, on a type, for the resource's methods that do not say).
     * More than one is refused at the request, answered 500 before anything runs.
     *
     * @return the choice, or none for the feature's
     */
    ServerErrors[] serverErrors() default {};
}
