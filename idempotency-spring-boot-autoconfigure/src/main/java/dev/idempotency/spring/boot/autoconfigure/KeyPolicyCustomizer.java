package dev.idempotency.spring.boot.autoconfigure;

import dev.idempotency.KeyPolicy;

/**
 * Adds to the key policy that the auto-configured engine builds from the {@code idempotency.*}
 * properties, such as a final failure an adapter needs ({@link IdempotencyKafkaAutoConfiguration}
 * declares the Kafka consumers' {@code PoisonMessageException} final). Every bean of this type is
 * applied, in their order, after the properties. Implementations must be thread-safe.
 */
@FunctionalInterface
public interface KeyPolicyCustomizer {

    /** @param policy the builder, holding the properties' policy */
    void customize(KeyPolicy.Builder policy);
}
