package dev.idempotency.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Idempotency;
import dev.idempotency.spring.kafka.SpringKafkaIdempotency;
import dev.idempotency.testsupport.SpringBootLine;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.kafka.config.ConcurrentKafkaListenerContainerFactory;
import org.springframework.kafka.listener.CommonErrorHandler;
import org.springframework.kafka.listener.DefaultErrorHandler;

/**
 * With Spring for Apache Kafka on the class path: the beans a {@code @KafkaListener} needs, the
 * {@code idempotency.kafka.*} properties refused by name, and a container whose offsets could be
 * committed before the database commit refused when the factory creates it. No broker: nothing
 * connects.
 */
class IdempotencyKafkaAutoConfigurationTest {

    /** Boot's Kafka auto-configuration, under the name of the line the tests run on. */
    private static Class<?> bootKafka() throws ClassNotFoundException {
        return Class.forName(SpringBootLine.isBoot4() ? "org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration"
                : "org.springframework.boot.autoconfigure.kafka.KafkaAutoConfiguration");
    }

    private static ApplicationContextRunner runner() throws ClassNotFoundException {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(SpringBootLine.jdbcAutoConfigurations()))
                .withConfiguration(AutoConfigurations.of(bootKafka(), IdempotencyAutoConfiguration.class,
                        IdempotencyKafkaAutoConfiguration.class))
                .withPropertyValues("spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
                        "spring.datasource.generate-unique-name=false", "spring.kafka.bootstrap-servers=127.0.0.1:1");
    }

    @Test
    void theListenersBeans_andPoisonMessagesDeclaredFinal() throws Exception {
        runner().run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(SpringKafkaIdempotency.class).hasSingleBean(CommonErrorHandler.class);
            assertThat(context.getBean(CommonErrorHandler.class)).isInstanceOf(DefaultErrorHandler.class);
            SpringKafkaIdempotency kafka = context.getBean(SpringKafkaIdempotency.class);
            // built only on an engine whose key policy declares PoisonMessageException final
            assertThat(kafka.recordListener("billing", (tx, record) -> { })).isNotNull();
            assertThat(kafka.engine().engine()).isSameAs(context.getBean(Idempotency.class));
        });
    }

    @Test
    void aContainerWithAutoCommitOrManualImmediateIsRefusedNamingTheSetting() throws Exception {
        runner().withPropertyValues("spring.kafka.consumer.enable-auto-commit=true").run(context -> {
            ConcurrentKafkaListenerContainerFactory<?, ?> factory = context.getBean(ConcurrentKafkaListenerContainerFactory.class);
            assertThatThrownBy(() -> factory.createContainer("payments")).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("enable.auto.commit=true");
        });
        runner().withPropertyValues("spring.kafka.listener.ack-mode=manual-immediate").run(context -> {
            ConcurrentKafkaListenerContainerFactory<?, ?> factory = context.getBean(ConcurrentKafkaListenerContainerFactory.class);
            assertThatThrownBy(() -> factory.createContainer("payments")).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("MANUAL_IMMEDIATE");
        });
        runner().run(context -> assertThat(context.getBean(ConcurrentKafkaListenerContainerFactory.class).createContainer("payments"))
                .isNotNull());
    }

    @Test
    void invalidKafkaPropertiesAreRefusedByName() throws Exception {
        runner().withPropertyValues("idempotency.kafka.max-attempts=0").run(context -> assertThat(context.getStartupFailure())
                .rootCause().isInstanceOf(InvalidIdempotencyPropertyException.class).hasMessageContaining("idempotency.kafka.max-attempts"));
        runner().withPropertyValues("idempotency.kafka.retry-interval=-1s").run(context -> assertThat(context.getStartupFailure())
                .rootCause().isInstanceOf(InvalidIdempotencyPropertyException.class).hasMessageContaining("idempotency.kafka.retry-interval"));
        runner().withPropertyValues("idempotency.kafka.max-attempts=101").run(context -> assertThat(context.getStartupFailure())
                .rootCause().isInstanceOf(InvalidIdempotencyPropertyException.class).hasMessageContaining("must be 1 to 100"));
        runner().withPropertyValues("idempotency.kafka.retry-interval=2d").run(context -> assertThat(context.getStartupFailure())
                .rootCause().isInstanceOf(InvalidIdempotencyPropertyException.class).hasMessageContaining("zero to one day"));
    }
}
