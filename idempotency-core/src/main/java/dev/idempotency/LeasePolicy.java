package dev.idempotency;

import java.time.Duration;
import java.util.Objects;

/**
 * The settings of lease mode ({@link LeasedIdempotency#lease}, {@link LeasedIdempotency#run}):
 * how long a claim blocks other attempts, and what an attempt does when it finds a live lease.
 *
 * <p>Choose the lease longer than the slowest call you allow (the provider client's timeout, plus a
 * margin): an attempt whose lease ends while its call still runs may be taken over, and its result
 * is then refused ({@link LeaseLostException}). A long call can extend its lease
 * ({@link LeaseAttempt#extend}). A shorter lease lets a retry after a crash run sooner.
 *
 * <p>Immutable and thread-safe; build one with {@link #builder()} or take {@link #ofDefaults()}.
 */
public final class LeasePolicy {

    /** How long a claim blocks other attempts: 30 seconds. */
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);
    /** How long an attempt that finds a live lease waits for it: not at all, it gets {@code InProgress}. */
    public static final Duration DEFAULT_WAIT = Duration.ZERO;
    /** How often a waiting attempt looks again: every 100 milliseconds. */
    public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofMillis(100);

    private static final LeasePolicy DEFAULTS = builder().build();

    private final Duration lease;
    private final Duration wait;
    private final Duration pollInterval;

    private LeasePolicy(Builder b) {
        this.lease = b.lease;
        this.wait = b.wait;
        this.pollInterval = b.pollInterval;
    }

    /** @return a 30-second lease; an attempt that finds a live lease gets {@code InProgress} at once */
    public static LeasePolicy ofDefaults() {
        return DEFAULTS;
    }

    /** @return a builder starting from the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return how long a claim blocks other attempts */
    public Duration lease() {
        return lease;
    }

    /** @return how long an attempt that finds a live lease waits for its outcome before {@code InProgress} */
    public Duration waitForHolder() {
        return wait;
    }

    /** @return how often a waiting attempt looks again */
    public Duration pollInterval() {
        return pollInterval;
    }

    @Override
    public String toString() {
        return "LeasePolicy[lease=" + lease + ", waitForHolder=" + wait + ", pollInterval=" + pollInterval + "]";
    }

    /** @return {@code lease} if it is between 100 milliseconds and 1 day; else IllegalArgumentException naming it */
    static Duration checkLease(Duration lease) {
        return Builder.range("lease", lease, Duration.ofMillis(100), Duration.ofDays(1));
    }

    /** Builds a {@link LeasePolicy}. Not thread-safe; the policy it builds is. */
    public static final class Builder {
        private Duration lease = DEFAULT_LEASE;
        private Duration wait = DEFAULT_WAIT;
        private Duration pollInterval = DEFAULT_POLL_INTERVAL;

        private Builder() {
        }

        /**
         * @param lease how long a claim blocks other attempts: 100 milliseconds to 1 day
         * @return this builder
         * @throws IllegalArgumentException naming the field if out of range
         */
        public Builder lease(Duration lease) {
            this.lease = checkLease(lease);
            return this;
        }

        /**
         * @param wait how long an attempt that finds a live lease polls for the holder's outcome
         *     (replaying it if it completes, claiming the key if the lease ends) before it gets
         *     {@code InProgress}: zero (the default) to 10 minutes
         * @return this builder
         * @throws IllegalArgumentException naming the field if out of range
         */
        public Builder waitForHolder(Duration wait) {
            this.wait = range("waitForHolder", wait, Duration.ZERO, Duration.ofMinutes(10));
            return this;
        }

        /**
         * @param pollInterval how often a waiting attempt looks again: 1 millisecond to 1 minute
         * @return this builder
         * @throws IllegalArgumentException naming the field if out of range
         */
        public Builder pollInterval(Duration pollInterval) {
            this.pollInterval = range("pollInterval", pollInterval, Duration.ofMillis(1), Duration.ofMinutes(1));
            return this;
        }

        /** @return the policy */
        public LeasePolicy build() {
            return new LeasePolicy(this);
        }

        private static Duration range(String field, Duration value, Duration min, Duration max) {
            Objects.requireNonNull(value, field);
            if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
                throw new IllegalArgumentException(field + " must be between " + min + " and " + max + ", was " + value);
            }
            return value;
        }
    }
}
