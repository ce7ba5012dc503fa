package dev.idempotency.spring.webmvc;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.context.annotation.Import;

/**
 * Turns on {@link IdempotentEndpoint} in a Spring MVC application without Spring Boot: put it on a
 * {@code @Configuration} class of the context that holds the controllers (the one with
 * {@code @EnableWebMvc}), and it imports {@link IdempotentEndpointsConfiguration}, which defines the
 * {@link IdempotencyFilter} bean named {@value IdempotentEndpointsConfiguration#FILTER_BEAN_NAME}.
 * The servlet container learns of the filter through a {@code DelegatingFilterProxy} of that name
 * (see {@link IdempotentEndpointsConfiguration}).
 *
 * <p>With Spring Boot, leave it out: {@code idempotency-spring-boot-autoconfigure} configures the
 * same filter and registers it itself.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@Documented
@Import(IdempotentEndpointsConfiguration.class)
public @interface EnableIdempotentEndpoints {
}
