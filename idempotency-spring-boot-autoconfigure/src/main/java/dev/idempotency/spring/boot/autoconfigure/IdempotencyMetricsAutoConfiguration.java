package dev.idempotency.spring.boot.autoconfigure;

import dev.idempotency.micrometer.MicrometerIdempotencyListener;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * With Micrometer on the class path and a {@link MeterRegistry} in the context, a
 * {@link MicrometerIdempotencyListener}, which the auto-configured engine hears through. Off with
 * {@code idempotency.metrics.enabled=false}.
 */
@AutoConfiguration(before = IdempotencyAutoConfiguration.class, afterName = {
        // Boot 4
        "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration",
        // Boot 3.5, in spring-boot-actuator-autoconfigure
        "org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration" })
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean(MeterRegistry.class)
@ConditionalOnBooleanProperty(name = "idempotency.metrics.enabled", matchIfMissing = true)
@EnableConfigurationProperties(IdempotencyProperties.class)
public class IdempotencyMetricsAutoConfiguration {

    /** Created by Spring. */
    public IdempotencyMetricsAutoConfiguration() {
    }

    /**
     * @param registry the application's registry
     * @param properties the settings ({@code idempotency.metrics.scope-tag})
     * @return the listener that publishes the engine's metrics
     */
    @Bean
    @ConditionalOnMissingBean
    public MicrometerIdempotencyListener micrometerIdempotencyListener(MeterRegistry registry, IdempotencyProperties properties) {
        return new MicrometerIdempotencyListener(registry, properties.getMetrics().isScopeTag());
    }
}
