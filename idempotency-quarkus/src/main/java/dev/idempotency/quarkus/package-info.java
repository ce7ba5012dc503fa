/**
 * The {@code Idempotency-Key} header on Quarkus, as a runtime library: the CDI beans of
 * {@link dev.idempotency.quarkus.IdempotencyBeans}, configured by {@code idempotency.*} properties,
 * and the Jakarta REST providers that Quarkus REST discovers, for resource methods annotated
 * {@link dev.idempotency.jakarta.rest.IdempotentResource}.
 */
package dev.idempotency.quarkus;
