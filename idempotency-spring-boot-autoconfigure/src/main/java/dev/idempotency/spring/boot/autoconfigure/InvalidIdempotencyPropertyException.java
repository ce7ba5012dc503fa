package dev.idempotency.spring.boot.autoconfigure;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * An {@code idempotency.*} property whose value the library refuses (a negative lock timeout, a
 * result size over the limit, a reserved word as the table name). Thrown while the auto-configured
 * beans are built, so that the application's startup fails; Boot's failure analysis reports it as
 * "APPLICATION FAILED TO START" with the property, the value as the configuration wrote it and where,
 * the reason and what to do, instead of a stack trace.
 *
 * <p>Immutable, and so thread-safe.
 */
public class InvalidIdempotencyPropertyException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    /** The property's name. */
    private final String property;
    /** The value refused, as bound. */
    private final String value;
    /** Why it is refused. */
    private final String reason;

    /**
     * @param property the property's name, such as {@code idempotency.lock-timeout}
     * @param value the value refused, as bound
     * @param reason why it is refused
     * @param cause the refusal of the component the property configures, or {@code null}
     */
    public InvalidIdempotencyPropertyException(String property, String value, String reason, @Nullable Throwable cause) {
        super(Objects.requireNonNull(property, "property") + " = " + value + " is refused: " + reason, cause);
        this.property = property;
        this.value = Objects.requireNonNull(value, "value");
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    /** @return the property's name, such as {@code idempotency.lock-timeout} */
    public String property() {
        return property;
    }

    /** @return the value refused, as bound ({@code PT-1S} for {@code -1s}, say) */
    public String value() {
        return value;
    }

    /** @return why it is refused */
    public String reason() {
        return reason;
    }
}
