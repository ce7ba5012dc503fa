package dev.idempotency.jakarta.rest;

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
 */
@NameBinding
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
public @interface IdempotentResource {
}
