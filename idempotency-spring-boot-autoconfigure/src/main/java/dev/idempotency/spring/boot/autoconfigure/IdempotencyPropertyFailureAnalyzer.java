package dev.idempotency.spring.boot.autoconfigure;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.origin.Origin;
import org.springframework.core.env.Environment;

/**
 * Turns an {@link InvalidIdempotencyPropertyException} into Boot's "APPLICATION FAILED TO START"
 * report: the property, its value as the configuration wrote it ({@code -1s}, not {@code PT-1S}) and
 * where it was written, the reason, and the action. Boot finds it in {@code META-INF/spring.factories}
 * and gives it the application's {@link Environment}.
 *
 * <p>Thread-safe: it keeps only the environment, which it reads.
 */
final class IdempotencyPropertyFailureAnalyzer extends AbstractFailureAnalyzer<InvalidIdempotencyPropertyException> {

    private final Environment environment;

    IdempotencyPropertyFailureAnalyzer(Environment environment) {
        this.environment = environment;
    }

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, InvalidIdempotencyPropertyException cause) {
        ConfigurationProperty written = written(cause.property());
        String value = written == null ? cause.value() : String.valueOf(written.getValue());
        Origin origin = written == null ? null : written.getOrigin();
        String description = "Invalid value '" + value + "' for configuration property '" + cause.property() + "'"
                + (origin == null ? "" : " (originating from '" + origin + "')") + ":\n\n    " + cause.reason();
        String action = "Update '" + cause.property() + "' in the application's configuration to a value the reason above"
                + " allows, or remove it to use the default.";
        return new FailureAnalysis(description, action, cause);
    }

    /** The property as the first configuration source that holds it wrote it, as binding reads it. */
    private @Nullable ConfigurationProperty written(String property) {
        if (!ConfigurationPropertyName.isValid(property)) {
            return null;
        }
        ConfigurationPropertyName name = ConfigurationPropertyName.of(property);
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            ConfigurationProperty found = source.getConfigurationProperty(name);
            if (found != null) {
                return found;
            }
        }
        return null;
    }
}
