package dev.idempotency.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.Outcome;
import dev.idempotency.micrometer.MicrometerIdempotencyListener;
import dev.idempotency.spring.SpringIdempotency;
import dev.idempotency.testsupport.SpringBootLine;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A real Boot application whose {@link MeterRegistry} is Boot's own, from Boot's metrics
 * auto-configuration (as an application with the actuator has it), not one the application defines:
 * the metrics auto-configuration must run after Boot's, under the class names of the line on the
 * class path, to see that registry, and the engine's metrics then go to it.
 */
class MetricsApplicationTest {

    @SpringBootConfiguration
    @EnableAutoConfiguration(excludeName = { SpringBootLine.BOOT4_HIBERNATE_JPA, SpringBootLine.BOOT3_HIBERNATE_JPA })
    static class Shop {
    }

    @Test
    void bootsOwnRegistryGetsTheEnginesMetrics() {
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(Shop.class).web(WebApplicationType.NONE)
                .properties("spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
                        "spring.main.banner-mode=off", "idempotency.create-table=true")
                .run()) {
            assertThat(context.getBeansOfType(MeterRegistry.class)).as("Boot's registry, none of the application's").isNotEmpty();
            assertThat(context.getBeansOfType(MicrometerIdempotencyListener.class)).hasSize(1);

            SpringIdempotency idempotency = context.getBean(SpringIdempotency.class);
            Outcome<String> outcome = new TransactionTemplate(context.getBean(PlatformTransactionManager.class))
                    .execute(status -> idempotency.execute(IdempotencyKey.of("shop", "order-1"), () -> "paid"));
            assertThat(outcome.value()).isEqualTo("paid");

            MeterRegistry registry = context.getBean(MeterRegistry.class);
            assertThat(registry.find(MicrometerIdempotencyListener.EXECUTIONS).tag("outcome", "executed").timer())
                    .as("the engine's timer in Boot's registry").isNotNull()
                    .satisfies(timer -> assertThat(timer.count()).isEqualTo(1));
        }
    }
}
