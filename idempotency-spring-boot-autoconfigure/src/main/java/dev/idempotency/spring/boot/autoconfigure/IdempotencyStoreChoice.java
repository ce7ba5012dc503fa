package dev.idempotency.spring.boot.autoconfigure;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.stream.Collectors;
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
 *   <li>{@code idempotency.store=redis} or {@code dynamodb}: that lease-only store ({@link LeaseOnly}),
 *       lease mode and phases only ({@link IdempotencyRedisAutoConfiguration},
 *       {@link IdempotencyDynamoDbAutoConfiguration}, the engine by
 *       {@link IdempotencyLeaseModeAutoConfiguration}), even if there is a {@code DataSource};</li>
 *   <li>unset: the JDBC store if there is a {@code DataSource} (as before the other stores existed,
 *       so that an application that keeps a Redis client for a cache keeps its engine); otherwise the
 *       lease-only store whose client bean the application defines (a Lettuce {@code RedisClient}, an
 *       AWS SDK {@code DynamoDbClient}); otherwise no engine. Client beans of two of them, and no
 *       {@code DataSource}, stop the startup asking for the property.</li>
 * </ol>
 * Any other value, a store whose classes are missing, and {@code jdbc} without a {@code DataSource}
 * stop the startup with an {@link InvalidIdempotencyPropertyException} naming {@code idempotency.store}
 * ({@link #check}).
 *
 * <p>Stateless and thread-safe.
 */
final class IdempotencyStoreChoice {

    static final String PROPERTY = "idempotency.store";
    static final String JDBC = "jdbc";
    static final String REDIS_STORE_CLASS = "dev.idempotency.redis.RedisLeasingStore";
    static final String REDIS_CLIENT_CLASS = "io.lettuce.core.RedisClient";
    static final String DYNAMODB_STORE_CLASS = "dev.idempotency.dynamodb.DynamoDbLeasingStore";
    static final String DYNAMODB_CLIENT_CLASS = "software.amazon.awssdk.services.dynamodb.DynamoDbClient";

    /**
     * The stores that keep their records outside the application's database: lease mode only, as
     * they cannot take part in its transaction. Each with the classes it needs and what to add when
     * they are missing. A new lease-only store is one more constant here and its store
     * auto-configuration; the engine's beans are {@link IdempotencyLeaseModeAutoConfiguration}'s.
     */
    enum LeaseOnly {
        /** The Redis store, {@code idempotency.redis.*}. */
        REDIS("redis", "the Redis store", REDIS_STORE_CLASS, REDIS_CLIENT_CLASS,
                "dev.idempotency:idempotency-redis (it brings Lettuce, io.lettuce:lettuce-core)",
                "Lettuce is not on the class path: add the dependency io.lettuce:lettuce-core"),
        /** The DynamoDB store, {@code idempotency.dynamodb.*}. */
        DYNAMODB("dynamodb", "the DynamoDB store", DYNAMODB_STORE_CLASS, DYNAMODB_CLIENT_CLASS,
                "dev.idempotency:idempotency-dynamodb (it brings the AWS SDK's software.amazon.awssdk:dynamodb)",
                "the AWS SDK's DynamoDB client is not on the class path: add the dependency software.amazon.awssdk:dynamodb");

        /** The value of {@code idempotency.store}. */
        final String value;
        /** How messages name it. */
        final String title;
        /** The store's class, in its module. */
        final String storeClass;
        /** The client's class, whose bean chooses the store when the property is unset. */
        final String clientClass;
        private final String storeDependency;
        private final String clientMissing;

        LeaseOnly(String value, String title, String storeClass, String clientClass, String storeDependency, String clientMissing) {
            this.value = value;
            this.title = title;
            this.storeClass = storeClass;
            this.clientClass = clientClass;
            this.storeDependency = storeDependency;
            this.clientMissing = clientMissing;
        }

        /** @return the client class's simple name, as messages say it */
        String clientName() {
            return ClassUtils.getShortName(clientClass);
        }

        /** @return the store named {@code value}, or {@code null} */
        static @Nullable LeaseOnly named(@Nullable String value) {
            for (LeaseOnly kind : values()) {
                if (kind.value.equals(value)) {
                    return kind;
                }
            }
            return null;
        }

        /** @return whether the application defines a bean of this store's client */
        boolean clientBeanIn(ConfigurableListableBeanFactory beans, @Nullable ClassLoader classes) {
            if (!ClassUtils.isPresent(clientClass, classes)) {
                return false;
            }
            Class<?> client = ClassUtils.resolveClassName(clientClass, classes);
            return beans.getBeanNamesForType(client, true, false).length > 0;
        }
    }

    private IdempotencyStoreChoice() {
    }

    /** @return the value of {@code idempotency.store}, lower case, or {@code null} if unset */
    static @Nullable String chosen(Environment environment) {
        String value = environment.getProperty(PROPERTY);
        return value == null || value.isBlank() ? null : value.strip().toLowerCase(Locale.ROOT);
    }

    /**
     * The lease-only store the application chose, by the property or, unset, by its client bean.
     *
     * @return the store, or {@code null} for the JDBC store or none
     */
    static @Nullable LeaseOnly leaseOnly(Environment environment, @Nullable ConfigurableListableBeanFactory beans,
            @Nullable ClassLoader classes) {
        String chosen = chosen(environment);
        if (chosen != null) {
            return LeaseOnly.named(chosen);
        }
        if (beans == null || beans.getBeanNamesForType(DataSource.class, true, false).length > 0) {
            return null;
        }
        List<LeaseOnly> present = byClientBean(beans, classes);
        return present.size() == 1 ? present.get(0) : null;
    }

    private static List<LeaseOnly> byClientBean(ConfigurableListableBeanFactory beans, @Nullable ClassLoader classes) {
        List<LeaseOnly> present = new ArrayList<>();
        for (LeaseOnly kind : LeaseOnly.values()) {
            if (kind.clientBeanIn(beans, classes)) {
                present.add(kind);
            }
        }
        return present;
    }

    /**
     * Refuses a choice that cannot be served.
     *
     * @throws InvalidIdempotencyPropertyException naming {@code idempotency.store}, or
     *     {@code idempotency.recovery.enabled} when the worker is asked for on a lease-only store
     */
    static void check(Environment environment, ConfigurableListableBeanFactory beans, @Nullable ClassLoader classes) {
        String chosen = chosen(environment);
        if (chosen == null) {
            List<LeaseOnly> present = byClientBean(beans, classes);
            if (present.size() > 1 && beans.getBeanNamesForType(DataSource.class, true, false).length == 0) {
                throw new InvalidIdempotencyPropertyException(PROPERTY, "(unset)", "there is no DataSource, and client beans of "
                        + present.stream().map(k -> k.title + " (" + k.clientName() + ")").collect(Collectors.joining(" and "))
                        + ": set " + PROPERTY + " to " + present.stream().map(k -> k.value).collect(Collectors.joining(" or "))
                        + " to say which one keeps the records", null);
            }
            LeaseOnly kind = leaseOnly(environment, beans, classes);
            if (kind != null) {
                refuseRecoveryOn(kind, environment, PROPERTY + " is unset and the " + kind.clientName() + " bean chose " + kind.title);
            }
            return;
        }
        String written = Objects.requireNonNull(environment.getProperty(PROPERTY), PROPERTY); // set, since chosen is not null
        if (JDBC.equals(chosen)) {
            if (beans.getBeanNamesForType(DataSource.class, true, false).length == 0) {
                throw refused(written, "the JDBC store needs the application's DataSource, and there is no DataSource bean:"
                        + " configure spring.datasource.* (or define a DataSource), or set " + PROPERTY + " to "
                        + leaseOnlyValues() + " for lease mode only");
            }
            return;
        }
        LeaseOnly kind = LeaseOnly.named(chosen);
        if (kind == null) {
            throw refused(written, "must be " + JDBC + " (the JDBC store on the application's DataSource, every mode) or "
                    + leaseOnlyValues() + " (lease mode only)");
        }
        if (!ClassUtils.isPresent(kind.storeClass, classes)) {
            throw refused(written, kind.title + " is not on the class path: add the dependency " + kind.storeDependency);
        }
        if (!ClassUtils.isPresent(kind.clientClass, classes)) {
            throw refused(written, kind.clientMissing);
        }
        refuseRecoveryOn(kind, environment, PROPERTY + "=" + kind.value + " chose " + kind.title);
    }

    private static void refuseRecoveryOn(LeaseOnly kind, Environment environment, String why) {
        if (environment.getProperty("idempotency.recovery.enabled", Boolean.class, false)) {
            throw new InvalidIdempotencyPropertyException("idempotency.recovery.enabled", "true", "the recovery worker needs a"
                    + " store that lists the operations left in progress (the JDBC store), and " + why + ", which does not: there"
                    + " an operation resumes when its key is retried; leave idempotency.recovery.enabled unset", null);
        }
    }

    /** @return the lease-only stores' values, for messages: {@code redis or dynamodb} */
    static String leaseOnlyValues() {
        return Arrays.stream(LeaseOnly.values()).map(k -> k.value).collect(Collectors.joining(" or "));
    }

    private static InvalidIdempotencyPropertyException refused(String written, String reason) {
        return new InvalidIdempotencyPropertyException(PROPERTY, written, reason, null);
    }

    /**
     * Matches when the lease-only store it names is the choice ({@link #leaseOnly}), or, for
     * {@link Any}, when any is. Evaluated when beans are registered, after the application's own
     * configuration.
     */
    abstract static class OnLeaseOnly extends SpringBootCondition implements ConfigurationCondition {

        private final @Nullable LeaseOnly kind;

        OnLeaseOnly(@Nullable LeaseOnly kind) {
            this.kind = kind;
        }

        @Override
        public ConfigurationPhase getConfigurationPhase() {
            return ConfigurationPhase.REGISTER_BEAN;
        }

        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            LeaseOnly chosen = leaseOnly(context.getEnvironment(), context.getBeanFactory(), context.getClassLoader());
            if (chosen == null) {
                return ConditionOutcome.noMatch("no lease-only store chosen: " + PROPERTY + " is "
                        + (chosen(context.getEnvironment()) == null ? "unset, with a DataSource bean or no single store client bean"
                                : chosen(context.getEnvironment())));
            }
            if (kind != null && kind != chosen) {
                return ConditionOutcome.noMatch(chosen.title + " chosen, not " + kind.title);
            }
            return ConditionOutcome.match(chosen.title + " chosen"
                    + (chosen(context.getEnvironment()) == null ? " by its " + chosen.clientName() + " bean" : " by " + PROPERTY));
        }
    }

    /** Matches when the Redis store is the choice. */
    static final class OnRedis extends OnLeaseOnly {
        OnRedis() {
            super(LeaseOnly.REDIS);
        }
    }

    /** Matches when the DynamoDB store is the choice. */
    static final class OnDynamoDb extends OnLeaseOnly {
        OnDynamoDb() {
            super(LeaseOnly.DYNAMODB);
        }
    }

    /** Matches when a lease-only store, any, is the choice. */
    static final class Any extends OnLeaseOnly {
        Any() {
            super(null);
        }
    }
}
