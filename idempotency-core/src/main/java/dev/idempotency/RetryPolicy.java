package dev.idempotency;

import java.time.Duration;
import java.util.Objects;
import java.util.function.DoubleSupplier;

/**
 * How the library retries: up to {@link #maxAttempts()} attempts in all, the first included, and
 * before each retry a pause under an exponentially growing bound,
 * {@link #backoffBound(int) min(maxBackoff, initialBackoff * 2^(retry - 1))}. The one policy of every
 * retry loop of the library:
 *
 * <ul>
 *   <li>{@link ManagedIdempotency} retries a transaction that the database aborted to resolve a
 *       conflict (a serialization failure, a deadlock, a cluster's certification failure at
 *       commit), pausing the calling thread for {@link #backoff(int, DoubleSupplier)}: a pause
 *       drawn at random between zero and the bound ("full jitter"), so that colliding attempts
 *       spread out;</li>
 *   <li>the HTTP layer's retrying client does the same between its requests;</li>
 *   <li>{@link RecoveryWorker} leaves an operation whose resumed attempt failed alone for the
 *       bound itself, no jitter (its attempts are fenced, not colliding), and gives it up after
 *       the attempts.</li>
 * </ul>
 * The bound's largest value is at most {@link #LONGEST_BACKOFF}, one day: the worker's backoff grows
 * up to its interval between passes, minutes apart. A pause that sleeps the caller's thread (the
 * conflict retries, the HTTP client) wants the defaults' milliseconds to seconds.
 *
 * <p>Immutable and thread-safe; build one with {@link #builder()} or take {@link #ofDefaults()}.
 */
public final class RetryPolicy {

    /** Attempts in all, the first included: 5. */
    public static final int DEFAULT_MAX_ATTEMPTS = 5;
    /** The bound of the first pause: 20 milliseconds. */
    public static final Duration DEFAULT_INITIAL_BACKOFF = Duration.ofMillis(20);
    /** The largest bound of a pause: 1 second. */
    public static final Duration DEFAULT_MAX_BACKOFF = Duration.ofSeconds(1);
    /** The longest {@link #maxBackoff()} a policy accepts: one day. */
    public static final Duration LONGEST_BACKOFF = Duration.ofDays(1);

    private static final RetryPolicy DEFAULTS = builder().build();
    private static final RetryPolicy NONE = builder().maxAttempts(1).build();

    private final int maxAttempts;
    private final Duration initialBackoff;
    private final Duration maxBackoff;

    private RetryPolicy(Builder b) {
        this.maxAttempts = b.maxAttempts;
        this.initialBackoff = b.initialBackoff;
        this.maxBackoff = b.maxBackoff;
    }

    /** @return 5 attempts, pauses bounded by 20 ms doubling up to 1 s */
    public static RetryPolicy ofDefaults() {
        return DEFAULTS;
    }

    /** @return one attempt: a conflict reaches the caller */
    public static RetryPolicy none() {
        return NONE;
    }

    /** @return a builder starting from the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return attempts in all, the first included */
    public int maxAttempts() {
        return maxAttempts;
    }

    /** @return the bound of the first pause */
    public Duration initialBackoff() {
        return initialBackoff;
    }

    /** @return the largest bound of a pause */
    public Duration maxBackoff() {
        return maxBackoff;
    }

    /**
     * The bound of the pause before a retry: {@code min(maxBackoff, initialBackoff * 2^(retry - 1))}.
     *
     * @param retry 1 for the pause before the second attempt, 2 before the third, ...
     * @return the bound, between {@link #initialBackoff()} (or zero) and {@link #maxBackoff()}
     * @throws IllegalArgumentException if {@code retry} is less than 1
     */
    public Duration backoffBound(int retry) {
        if (retry < 1) {
            throw new IllegalArgumentException("retry must be at least 1, was " + retry);
        }
        long bound = initialBackoff.toNanos();
        for (int i = 1; i < retry && bound < maxBackoff.toNanos(); i++) {
            bound = bound > Long.MAX_VALUE / 2 ? Long.MAX_VALUE : bound * 2;
        }
        return Duration.ofNanos(Math.min(bound, maxBackoff.toNanos()));
    }

    /**
     * The pause before a retry, with full jitter: a random share of {@link #backoffBound(int)}.
     *
     * @param retry 1 for the pause before the second attempt, 2 before the third, ...
     * @param random a source of numbers in {@code [0, 1)}
     * @return the pause, between zero and the bound for that retry
     * @throws IllegalArgumentException if {@code retry} is less than 1
     */
    public Duration backoff(int retry, DoubleSupplier random) {
        long bound = backoffBound(retry).toNanos();
        double r = random.getAsDouble();
        return Duration.ofNanos((long) (Math.max(0, Math.min(r, 1)) * bound));
    }

    @Override
    public String toString() {
        return "RetryPolicy[maxAttempts=" + maxAttempts + ", initialBackoff=" + initialBackoff + ", maxBackoff=" + maxBackoff + "]";
    }

    /** Builds a {@link RetryPolicy}. Not thread-safe; the policy it builds is. */
    public static final class Builder {
        private int maxAttempts = DEFAULT_MAX_ATTEMPTS;
        private Duration initialBackoff = DEFAULT_INITIAL_BACKOFF;
        private Duration maxBackoff = DEFAULT_MAX_BACKOFF;

        private Builder() {
        }

        /**
         * @param maxAttempts attempts in all, the first included: 1 (no retry) to 100
         * @return this builder
         * @throws IllegalArgumentException naming the field if out of range
         */
        public Builder maxAttempts(int maxAttempts) {
            if (maxAttempts < 1 || maxAttempts > 100) {
                throw new IllegalArgumentException("maxAttempts must be between 1 and 100, was " + maxAttempts);
            }
            this.maxAttempts = maxAttempts;
            return this;
        }

        /**
         * @param initial the bound of the first pause; zero or more
         * @param max the largest bound of a pause; at least {@code initial}, at most
         *     {@link #LONGEST_BACKOFF} (one day)
         * @return this builder
         * @throws IllegalArgumentException naming the field if out of range
         */
        public Builder backoff(Duration initial, Duration max) {
            Objects.requireNonNull(initial, "initial");
            Objects.requireNonNull(max, "max");
            if (initial.isNegative()) {
                throw new IllegalArgumentException("initial backoff must not be negative, was " + initial);
            }
            if (max.compareTo(initial) < 0 || max.compareTo(LONGEST_BACKOFF) > 0) {
                throw new IllegalArgumentException("max backoff must be between the initial backoff (" + initial
                        + ") and one day, was " + max);
            }
            this.initialBackoff = initial;
            this.maxBackoff = max;
            return this;
        }

        /** @return the policy */
        public RetryPolicy build() {
            return new RetryPolicy(this);
        }
    }
}
