package dev.idempotency.spring.boot.autoconfigure;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * Checks {@code idempotency.store} at startup ({@link IdempotencyStoreChoice}): a value no store
 * serves stops the startup naming the property, even when no engine is configured because of it.
 * Runs after the auto-configurations that define the {@code DataSource}.
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class, afterName = {
        "dev.idempotency.spring.boot.autoconfigure.IdempotencyRedisAutoConfiguration",
        "dev.idempotency.spring.boot.autoconfigure.IdempotencyDynamoDbAutoConfiguration",
        "dev.idempotency.spring.boot.autoconfigure.IdempotencyLeaseModeAutoConfiguration" })
public class IdempotencyStoreAutoConfiguration {

    /** Created by Spring. */
    public IdempotencyStoreAutoConfiguration() {
    }

    /**
     * @return a marker whose creation checked the choice
     * @throws InvalidIdempotencyPropertyException naming {@code idempotency.store} if the choice cannot be served
     */
    @Bean
    static Checked idempotencyStoreChecked(Environment environment, ConfigurableListableBeanFactory beans) {
        IdempotencyStoreChoice.check(environment, beans, beans.getBeanClassLoader());
        return new Checked();
    }

    /** The marker bean of a checked {@code idempotency.store}. */
    static final class Checked {
        private Checked() {
        }
    }
}
