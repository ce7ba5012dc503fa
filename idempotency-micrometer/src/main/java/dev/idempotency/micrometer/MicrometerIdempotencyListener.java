package dev.idempotency.micrometer;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.Outcome;
import dev.idempotency.RecoveryAction;
import dev.idempotency.StoreUnavailableException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Publishes what the engine reports to a Micrometer {@link MeterRegistry}:
 *
 * <ul>
 *   <li>{@value #EXECUTIONS}, a timer per outcome: tag {@code outcome} = {@code executed},
 *       {@code replayed}, {@code in_progress}, {@code mismatch}, {@code failed} (a recorded final
 *       failure), or {@code error} (an exception reached the caller);</li>
 *   <li>{@value #ERRORS}, a counter per error type: tag {@code error} = the simple name of the
 *       exception's class (the work's own, or the library's such as {@code TransactionRequiredException});</li>
 *   <li>{@value #RETRIES}, a counter of conflicts retried by a {@code ManagedIdempotency}, tag
 *       {@code error} as above;</li>
 *   <li>{@value #DUPLICATES}, a counter of duplicates whose cause an adapter told (a message
 *       consumer's {@code redelivered} or {@code sent-again}), tag {@code cause};</li>
 *   <li>{@value #RECOVERIES}, a counter of what a recovery worker did, tags {@code action}
 *       ({@code resumed}, {@code retrying}, {@code gave_up}, {@code reported}) and
 *       {@code operation} (the registered name, a bounded set);</li>
 *   <li>{@value #WITHOUT_DEDUPLICATION}, a counter of lease-mode calls run without deduplication
 *       because the store could not be reached ({@code StoreUnavailablePolicy.RUN_WITHOUT_DEDUPLICATION}),
 *       tag {@code error} = the simple name of the store client's exception;</li>
 *   <li>{@value #ABANDONED_CLAIMS}, a counter of abandoned claims (committed without their result)
 *       that purges deleted, no tags: above zero, a work ends its caller's transaction.</li>
 * </ul>
 * The key's id is never a tag: ids are unbounded. The key's scope is one (tag {@code scope}) only
 * when asked for (the constructor's {@code scopeTag}: {@code idempotency.metrics.scope-tag=true} on Spring Boot and
 * on Quarkus), since scopes are often one per tenant.
 *
 * <p>Thread-safe, as the registry is.
 */
public final class MicrometerIdempotencyListener implements IdempotencyListener {

    /** The timer of attempts, by outcome. */
    public static final String EXECUTIONS = "idempotency.executions";
    /** The counter of exceptions that reached the caller, by type. */
    public static final String ERRORS = "idempotency.errors";
    /** The counter of whole-transaction retries after a conflict, by type. */
    public static final String RETRIES = "idempotency.retries";
    /** The counter of duplicates whose cause an adapter told, by cause. */
    public static final String DUPLICATES = "idempotency.duplicates";
    /** The counter of the recovery worker's actions, by action and operation. */
    public static final String RECOVERIES = "idempotency.recoveries";

    /** The counter of calls run without deduplication, the store unreachable, by the client's exception. */
    public static final String WITHOUT_DEDUPLICATION = "idempotency.runs.without.deduplication";

    /** The counter of abandoned claims (committed without their result) that purges deleted. */
    public static final String ABANDONED_CLAIMS = "idempotency.abandoned.claims";

    private final MeterRegistry registry;
    private final boolean scopeTag;

    /**
     * @param registry where the meters go
     * @param scopeTag whether to tag each meter with the key's scope
     */
    public MicrometerIdempotencyListener(MeterRegistry registry, boolean scopeTag) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.scopeTag = scopeTag;
    }

    @Override
    public void onOutcome(IdempotencyKey key, Outcome.Status status, Duration elapsed) {
        timer(key, status.name().toLowerCase(Locale.ROOT)).record(elapsed);
    }

    @Override
    public void onError(@Nullable IdempotencyKey key, Throwable failure, Duration elapsed) {
        timer(key, "error").record(elapsed);
        counter(ERRORS, "Exceptions of idempotent executions that reached the caller, by type", key, failure).increment();
    }

    @Override
    public void onRetry(@Nullable IdempotencyKey key, int attempt, Throwable failure, Duration backoff) {
        counter(RETRIES, "Transactions run again after a conflict the database resolved by aborting them", key, failure)
                .increment();
    }

    @Override
    public void onDuplicate(IdempotencyKey key, String cause) {
        Counter.builder(DUPLICATES).description("Duplicates replayed whose cause the adapter that received them told, by cause")
                .tags(tags(key).and("cause", cause)).register(registry).increment();
    }

    @Override
    public void onRecovery(IdempotencyKey key, String operation, RecoveryAction action, @Nullable Throwable failure) {
        Counter.builder(RECOVERIES).description("What the recovery worker did with operations their client abandoned")
                .tags(tags(key).and("action", action.name().toLowerCase(Locale.ROOT)).and("operation", operation))
                .register(registry).increment();
    }

    @Override
    public void onRunWithoutDeduplication(IdempotencyKey key, StoreUnavailableException unavailable) {
        counter(WITHOUT_DEDUPLICATION, "Lease-mode calls run without deduplication because the store could not be reached", key,
                unavailable.getCause() != null ? unavailable.getCause() : unavailable).increment();
    }

    @Override
    public void onAbandonedClaimsPurged(int count) {
        Counter.builder(ABANDONED_CLAIMS).description("Abandoned claims (committed without their result) that purges deleted")
                .register(registry).increment(count);
    }

    private Timer timer(@Nullable IdempotencyKey key, String outcome) {
        return Timer.builder(EXECUTIONS)
                .description("Idempotent executions, from the start of execute to the outcome, by outcome")
                .tags(tags(key).and("outcome", outcome))
                .register(registry);
    }

    private Counter counter(String name, String description, @Nullable IdempotencyKey key, Throwable failure) {
        return Counter.builder(name).description(description).tags(tags(key).and("error", errorType(failure)))
                .register(registry);
    }

    /** A chunk's error or retry may have no key (an empty chunk, or a first item whose key cannot be had): scope "unknown". */
    private Tags tags(@Nullable IdempotencyKey key) {
        return scopeTag ? Tags.of("scope", key == null ? "unknown" : key.scope()) : Tags.empty();
    }

    private static String errorType(Throwable failure) {
        String simple = failure.getClass().getSimpleName();
        return simple.isEmpty() ? failure.getClass().getName() : simple;
    }

    @Override
    public String toString() {
        return "MicrometerIdempotencyListener[" + registry + (scopeTag ? ", scope tag" : "") + "]";
    }
}
