package dev.idempotency.spring.boot.autoconfigure;

import java.util.Locale;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.ConfigurationCondition;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.util.ClassUtils;

/**
 * Which store the auto-configuration builds its engine on, in one place. The rule:
 *
 * <ol>
 *   <li>{@code idempotency.store=jdbc}: the JDBC store on the application's one {@link DataSource},
 *       every mode ({@link IdempotencyAutoConfiguration});</li>
 *   <li>{@code idempotency.store=redis}: the Redis store, lease mode only
 *       ({@link IdempotencyRedisAutoConfiguration}), even if there is a {@code DataSource};</li>
 *   <li>unset: the JDBC store if there is a {@code DataSource} (as before the Redis store existed, so
 *       that an application that keeps a Redis client for a cache keeps its engine); otherwise the
 *       Redis store if there is a Lettuce {@code RedisClient} bean; otherwise no engine.</li>
 * </ol>
 * Any other value, {@code redis} without the Redis store or Lettuce on the class path, and
 * {@code jdbc} without a {@code DataSource} stop the startup with an
 * {@link InvalidIdempotencyPropertyException} naming {@code idempotency.store} ({@link #check}).
 *
 * <p>Stateless and thread-safe.
 */
final class IdempotencyStoreChoice {

    static final String PROPERTY = "idempotency.store";
    static final String JDBC = "jdbc";
    static final String REDIS = "redis";
    static final String REDIS_STORE_CLASS = "dev.idempotency.redis.RedisLeasingStore";
    static final String REDIS_CLIENT_CLASS = "io.lettuce.core.RedisClient";

    private IdempotencyStoreChoice() {
    }

    /** @return the value of {@code idempotency.store}, lower case, or {@code null} if unset */
    static @Nullable String chosen(Environment environment) {
        String value = environment.getProperty(PROPERTY);
        return value == null || value.isBlank() ? null : value.strip().toLowerCase(Locale.ROOT);
    }

    /**
     * Refuses a choice that cannot be served.
     *
     * @throws InvalidIdempotencyPropertyException naming {@code idempotency.store}
     */
    static void check(Environment environment, ConfigurableListableBeanFactory beans, ClassLoader classes) {
        String chosen = chosen(environment);
        if (chosen == null) {
            return;
        }
        String written = environment.getProperty(PROPERTY);
        switch (chosen) {
            case JDBC -> {
                if (beans.getBeanNamesForType(DataSource.class, true, false).length == 0) {
                    throw refused(written, "the JDBC store needs the application's DataSource, and there is no DataSource bean:"
                            + " configure spring.datasource.* (or define a DataSource), or set " + PROPERTY + "=" + REDIS);
                }
            }
            case REDIS -> {
                if (!ClassUtils.isPresent(REDIS_STORE_CLASS, classes)) {
                    throw refused(written, "the Redis store is not on the class path: add the dependency"
                            + " dev.idempotency:idempotency-redis (it brings Lettuce, io.lettuce:lettuce-core)");
                }
                if (!ClassUtils.isPresent(REDIS_CLIENT_CLASS, classes)) {
                    throw refused(written, "Lettuce is not on the class path: add the dependency io.lettuce:lettuce-core");
                }
                if (environment.getProperty("idempotency.recovery.enabled", Boolean.class, false)) {
                    throw new InvalidIdempotencyPropertyException("idempotency.recovery.enabled", "true", "the recovery worker needs a"
                            + " store that lists the operations left in progress (the JDBC store), and " + PROPERTY + "=" + REDIS
                            + " chose the Redis store, which does not: on Redis an operation resumes when its key is retried;"
                            + " leave idempotency.recovery.enabled unset", null);
                }
            }
            default -> throw refused(written, "must be " + JDBC + " (the JDBC store on the application's DataSource, every mode) or "
                    + REDIS + " (the Redis store, lease mode only)");
        }
    }

    private static InvalidIdempotencyPropertyException refused(String written, String reason) {
        return new InvalidIdempotencyPropertyException(PROPERTY, written, reason, null);
    }

    /**
     * Matches when the Redis store is the choice: {@code idempotency.store=redis}, or unset with a
     * Lettuce {@code RedisClient} bean and no {@code DataSource} bean. Evaluated when beans are
     * registered, after the application's own configuration.
     */
    static final class OnRedis extends SpringBootCondition implements ConfigurationCondition {

        @Override
        public ConfigurationPhase getConfigurationPhase() {
            return ConfigurationPhase.REGISTER_BEAN;
        }

        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            String chosen = chosen(context.getEnvironment());
            if (chosen != null) {
                return REDIS.equals(chosen) ? ConditionOutcome.match(PROPERTY + "=" + REDIS)
                        : ConditionOutcome.noMatch(PROPERTY + "=" + chosen);
            }
            ConfigurableListableBeanFactory beans = context.getBeanFactory();
            if (beans == null) {
                return ConditionOutcome.noMatch("no bean factory");
            }
            if (beans.getBeanNamesForType(DataSource.class, true, false).length > 0) {
                return ConditionOutcome.noMatch(PROPERTY + " unset and a DataSource bean: the JDBC store");
            }
            Class<?> client = ClassUtils.resolveClassName(REDIS_CLIENT_CLASS, context.getClassLoader());
            if (beans.getBeanNamesForType(client, true, false).length == 0) {
                return ConditionOutcome.noMatch(PROPERTY + " unset, no DataSource bean and no RedisClient bean");
            }
            return ConditionOutcome.match(PROPERTY + " unset, no DataSource bean and a RedisClient bean: the Redis store");
        }
    }
}
