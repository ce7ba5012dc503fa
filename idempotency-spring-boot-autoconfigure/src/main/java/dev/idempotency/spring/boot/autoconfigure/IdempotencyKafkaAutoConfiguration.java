package dev.idempotency.spring.boot.autoconfigure;

import dev.idempotency.ManagedIdempotency;
import dev.idempotency.RetryPolicy;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.kafka.PoisonMessageException;
import dev.idempotency.spring.kafka.SpringKafkaIdempotency;
import java.sql.Connection;
import java.time.Duration;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.config.ContainerCustomizer;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.KafkaOperations;
import org.springframework.kafka.listener.CommonErrorHandler;
import org.springframework.kafka.listener.ConcurrentMessageListenerContainer;
import org.springframework.kafka.listener.DeadLetterPublishingRecoverer;

/**
 * Idempotent {@code @KafkaListener} methods, when {@code idempotency-spring-kafka} and Spring for
 * Apache Kafka are on the class path. Beans, each left out when the application defines its own of
 * the same type:
 * <ul>
 *   <li>a {@link KeyPolicyCustomizer} declaring {@link PoisonMessageException} final, so that the
 *       engine can record a poison record's failure;</li>
 *   <li>{@link SpringKafkaIdempotency} on the auto-configured {@code ManagedIdempotency<Connection>},
 *       whose {@code recordListener} and {@code batchListener} the listener beans call;</li>
 *   <li>with a {@link KafkaOperations} bean (Boot's {@code KafkaTemplate}): the container factory's
 *       error handler, {@code idempotency.kafka.max-attempts} attempts
 *       {@code idempotency.kafka.retry-interval} apart, then the record published to
 *       {@code <topic>-dlt} and its failure recorded;</li>
 *   <li>the container factory's {@link ContainerCustomizer}, which refuses at startup a container
 *       that may commit an offset before the database commit ({@code enable.auto.commit=true},
 *       {@code AckMode.MANUAL_IMMEDIATE}), naming the setting.</li>
 * </ul>
 * It runs after Boot's Kafka auto-configuration, under the names of either line (Boot 4 and 3.5).
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class, afterName = {
        "org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration", // Boot 4
        "org.springframework.boot.autoconfigure.kafka.KafkaAutoConfiguration" }) // Boot 3.5
@ConditionalOnClass({ SpringKafkaIdempotency.class, KafkaOperations.class })
@EnableConfigurationProperties(IdempotencyKafkaAutoConfiguration.KafkaProperties.class)
public class IdempotencyKafkaAutoConfiguration {

    /** Created by Spring. */
    public IdempotencyKafkaAutoConfiguration() {
    }

    /** @return the customizer that declares the consumers' poison-message failure final */
    @Bean
    KeyPolicyCustomizer idempotencyKafkaPoisonMessages() {
        return policy -> policy.finalFailures(PoisonMessageException.class);
    }

    /**
     * @param consumerFactory the containers' consumer factory, if the context has one
     * @return the check of every listener container's offset commits
     */
    @Bean
    @ConditionalOnMissingBean(ContainerCustomizer.class)
    ContainerCustomizer<Object, Object, ConcurrentMessageListenerContainer<Object, Object>> idempotencyKafkaOffsetCommitCheck(
            ObjectProvider<ConsumerFactory<?, ?>> consumerFactory) {
        ConsumerFactory<?, ?> factory = consumerFactory.getIfUnique();
        Map<String, Object> config = factory == null ? Map.of() : factory.getConfigurationProperties();
        return SpringKafkaIdempotency.offsetCommitCheck(config);
    }

    /**
     * The beans over the engine for transactions the library runs: only over the JDBC store, whose
     * records share the listener's database transaction (under a lease-only store, Redis or DynamoDB,
     * there is none, and these stand back).
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBean({ ManagedIdempotency.class, JdbcIdempotencyStore.class })
    static class Listeners {

        @Bean
        @ConditionalOnMissingBean
        SpringKafkaIdempotency springKafkaIdempotency(ManagedIdempotency<Connection> managed) {
            return SpringKafkaIdempotency.of(managed);
        }

        @Bean
        @ConditionalOnMissingBean(CommonErrorHandler.class)
        @ConditionalOnBean(KafkaOperations.class)
        CommonErrorHandler idempotencyKafkaErrorHandler(SpringKafkaIdempotency kafka, KafkaOperations<?, ?> template,
                KafkaProperties properties) {
            properties.validate();
            return kafka.errorHandler(new DeadLetterPublishingRecoverer(template), properties.getMaxAttempts(),
                    properties.getRetryInterval());
        }
    }

    /**
     * The {@code idempotency.kafka.*} properties: the attempts of a failing record of a record
     * listener, and the wait between them. Not thread-safe while bound; read-only afterwards.
     */
    @ConfigurationProperties("idempotency.kafka")
    public static class KafkaProperties {

        /** The attempts of a failing record before it is published to the dead-letter topic and its failure recorded. */
        private int maxAttempts = SpringKafkaIdempotency.DEFAULT_MAX_ATTEMPTS;

        /** The wait between two attempts of a failing record. */
        private Duration retryInterval = Duration.ZERO;

        /** Creates the defaults. */
        public KafkaProperties() {
        }

        /** @return the attempts */
        public int getMaxAttempts() {
            return maxAttempts;
        }

        /** @param maxAttempts the attempts of a failing record, at least 1 */
        public void setMaxAttempts(int maxAttempts) {
            this.maxAttempts = maxAttempts;
        }

        /** @return the wait between two attempts */
        public Duration getRetryInterval() {
            return retryInterval;
        }

        /** @param retryInterval the wait between two attempts, zero or more */
        public void setRetryInterval(Duration retryInterval) {
            this.retryInterval = retryInterval;
        }

        /** @throws InvalidIdempotencyPropertyException naming the property whose value is refused */
        void validate() {
            if (maxAttempts < 1 || maxAttempts > 100) {
                throw new InvalidIdempotencyPropertyException("idempotency.kafka.max-attempts", String.valueOf(maxAttempts),
                        "must be 1 to 100 (1: no retry, the first failure is recorded and dead-lettered)", null);
            }
            if (retryInterval.isNegative() || retryInterval.compareTo(RetryPolicy.LONGEST_BACKOFF) > 0) {
                throw new InvalidIdempotencyPropertyException("idempotency.kafka.retry-interval", String.valueOf(retryInterval),
                        "must be zero to one day", null);
            }
        }
    }
}
