package dev.idempotency;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What happened to one attempt with a key. Expected results are values, never exceptions: the
 * work ran now ({@link Executed}), an earlier execution's result came back ({@link Replayed}),
 * another attempt holds the key ({@link InProgress}), the key was used for another request
 * ({@link Mismatch}), or a final failure was recorded ({@link Failed}).
 *
 * <p>From Java 17 without switch patterns, use {@link #status()} in a {@code switch}, or
 * {@code instanceof} with a pattern, or simply {@link #value()}, which returns the value or throws
 * an exception naming the key and the reason:
 *
 * <pre>{@code
 * Outcome<String> outcome = Idempotent.execute(key, connection, () -> reserve(connection));
 * switch (outcome.status()) {
 *     case EXECUTED, REPLAYED -> respond(200, outcome.value());
 *     case IN_PROGRESS -> respond(409, "retry later");
 *     case MISMATCH -> respond(422, "key reused for another request");
 *     case FAILED -> respond(402, ((Outcome.Failed<String>) outcome).errorMessage()); // value() would throw
 * }
 * }</pre>
 *
 * <p>An outcome is never {@code null}. All implementations are immutable records. A
 * {@code recordedAt} is in whole milliseconds, the precision of a stored record: the attempt that
 * records a final failure reports the same instant as every replay of it.
 *
 * @param <T> the type of the work's result
 */
public sealed interface Outcome<T>
        permits Outcome.Executed, Outcome.Replayed, Outcome.InProgress, Outcome.Mismatch, Outcome.Failed {

    /** The kind of an outcome, for a {@code switch}. */
    enum Status {
        /** The work ran in this attempt's transaction. */
        EXECUTED,
        /** An earlier committed execution's result; the work did not run. */
        REPLAYED,
        /** Another attempt holds the key; the work did not run. */
        IN_PROGRESS,
        /** The key was used with a different fingerprint; the work did not run. */
        MISMATCH,
        /** The work failed with a final failure, recorded now or earlier. */
        FAILED
    }

    /** @return the key of this attempt */
    IdempotencyKey key();

    /** @return the kind of this outcome */
    Status status();

    /**
     * The work's result, when this outcome has one.
     *
     * @return the value of an {@link Executed} or {@link Replayed} outcome (which may be {@code null}
     *     if the work returned {@code null})
     * @throws KeyInProgressException for {@link InProgress}
     * @throws KeyMismatchException for {@link Mismatch}
     * @throws RecordedFailureException for {@link Failed}
     */
    T value();

    /** @return whether {@link #value()} returns a value rather than throwing */
    default boolean hasValue() {
        return status() == Status.EXECUTED || status() == Status.REPLAYED;
    }

    /**
     * @param fallback what to return when there is no value
     * @return the value, or {@code fallback} for an outcome without one
     */
    default T valueOr(T fallback) {
        return hasValue() ? value() : fallback;
    }

    /** @return whether the work ran in this attempt */
    default boolean isExecuted() {
        return status() == Status.EXECUTED;
    }

    /**
     * @return whether this outcome comes from an earlier attempt's record (a replayed value or a
     *     replayed final failure); maps to an {@code Idempotent-Replayed: true} response header
     */
    default boolean isReplay() {
        return status() == Status.REPLAYED || (this instanceof Failed<T> f && f.replayed());
    }

    /**
     * The work ran now, in this attempt's transaction, and its result is recorded there.
     *
     * @param key the key
     * @param value the work's result
     * @param <T> the result type
     */
    record Executed<T>(IdempotencyKey key, T value) implements Outcome<T> {
        /**
         * @param key the key
         * @param value the work's result
         * @throws NullPointerException if {@code key} is null
         */
        public Executed {
            Objects.requireNonNull(key, "key");
        }

        @Override
        public Status status() {
            return Status.EXECUTED;
        }
    }

    /**
     * An earlier committed execution's result; the work did not run.
     *
     * @param key the key
     * @param value the recorded result
     * @param recordedAt when the result was recorded, in whole milliseconds
     * @param expiresAt until when the record answers retries, by the store's clock, in whole
     *     milliseconds: after it the key counts as new (contract 15.2)
     * @param <T> the result type
     */
    record Replayed<T>(IdempotencyKey key, T value, Instant recordedAt, Instant expiresAt) implements Outcome<T> {
        /**
         * @param key the key
         * @param value the recorded result
         * @param recordedAt when the result was recorded
         * @param expiresAt until when the record answers retries
         * @throws NullPointerException if {@code key}, {@code recordedAt} or {@code expiresAt} is null
         */
        public Replayed {
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(recordedAt, "recordedAt");
            Objects.requireNonNull(expiresAt, "expiresAt");
        }

        @Override
        public Status status() {
            return Status.REPLAYED;
        }
    }

    /**
     * Another attempt holds the key and did not finish within the policy's lock timeout; the work
     * did not run. Answer 409 and let the client retry.
     *
     * @param key the key
     * @param leaseUntil in lease mode, when the holder's lease ends by the store's clock (the earliest
     *     time a retry could take the key over); {@code null} in transactional mode, where the holder
     *     is an open transaction
     * @param leaseRemaining in lease mode, how long the holder's lease still ran when the store found
     *     it, measured by the store's clock alone (for a database, the server's, in the claim's own
     *     transaction): what a {@code Retry-After} should count, since this node's clock may differ
     *     from the store's. {@code null} where the store did not measure it: in transactional mode,
     *     and for a lease-mode key that transactional mode meets
     * @param expiresAt until when the key's record in progress is kept, by the store's clock, if the
     *     store said: the record's expiry, not its lease's end ({@code leaseUntil}). A completion
     *     sets a new expiry, counted from its own time. {@code null} where no record was read: in
     *     transactional mode the holder's claim is not committed yet, and a lease-mode store may not
     *     report it (contract 15.2)
     * @param <T> the result type
     */
    record InProgress<T>(IdempotencyKey key, @Nullable Instant leaseUntil, @Nullable Duration leaseRemaining,
                         @Nullable Instant expiresAt) implements Outcome<T> {
        /**
         * @param key the key
         * @param leaseUntil when the holder's lease ends, or {@code null}
         * @param leaseRemaining how long the holder's lease still ran, by the store's clock, or {@code null}
         * @param expiresAt until when the key's record in progress is kept, or {@code null}
         * @throws NullPointerException if {@code key} is null
         * @throws IllegalArgumentException if {@code leaseRemaining} is negative
         */
        public InProgress {
            Objects.requireNonNull(key, "key");
            if (leaseRemaining != null && leaseRemaining.isNegative()) {
                throw new IllegalArgumentException("leaseRemaining must not be negative, was " + leaseRemaining);
            }
        }

        /**
         * An attempt held under a lease, the record's expiry not reported.
         *
         * @param key the key
         * @param leaseUntil when the holder's lease ends, or {@code null}
         * @param leaseRemaining how long the holder's lease still ran, by the store's clock, or {@code null}
         * @throws NullPointerException if {@code key} is null
         * @throws IllegalArgumentException if {@code leaseRemaining} is negative
         */
        public InProgress(IdempotencyKey key, @Nullable Instant leaseUntil, @Nullable Duration leaseRemaining) {
            this(key, leaseUntil, leaseRemaining, null);
        }

        /**
         * An attempt held under a lease whose remaining time the store did not measure.
         *
         * @param key the key
         * @param leaseUntil when the holder's lease ends, or {@code null}
         * @throws NullPointerException if {@code key} is null
         */
        public InProgress(IdempotencyKey key, @Nullable Instant leaseUntil) {
            this(key, leaseUntil, null, null);
        }

        /**
         * An attempt held by an open transaction (transactional mode): no lease end, no expiry.
         *
         * @param key the key
         * @throws NullPointerException if {@code key} is null
         */
        public InProgress(IdempotencyKey key) {
            this(key, null, null, null);
        }

        @Override
        public Status status() {
            return Status.IN_PROGRESS;
        }

        /** @throws KeyInProgressException always */
        @Override
        public T value() {
            throw new KeyInProgressException(key);
        }
    }

    /**
     * The key was used before with a different request fingerprint; the work did not run.
     * Answer 422.
     *
     * @param key the key
     * @param <T> the result type
     */
    record Mismatch<T>(IdempotencyKey key) implements Outcome<T> {
        /**
         * @param key the key
         * @throws NullPointerException if {@code key} is null
         */
        public Mismatch {
            Objects.requireNonNull(key, "key");
        }

        @Override
        public Status status() {
            return Status.MISMATCH;
        }

        /** @throws KeyMismatchException always */
        @Override
        public T value() {
            throw new KeyMismatchException(key);
        }
    }

    /**
     * The work failed with an exception that the policy declares final; the failure is recorded,
     * and every retry gets it back without running the work.
     *
     * @param key the key
     * @param errorType the class name of the exception
     * @param errorMessage its message, or {@code null}
     * @param recordedAt when the failure was recorded, in whole milliseconds
     * @param replayed {@code false} in the attempt whose work failed, {@code true} in retries
     * @param <T> the result type
     */
    record Failed<T>(IdempotencyKey key, String errorType, @Nullable String errorMessage, Instant recordedAt, boolean replayed)
            implements Outcome<T> {
        /**
         * @param key the key
         * @param errorType the class name of the exception
         * @param errorMessage its message, or {@code null}
         * @param recordedAt when the failure was recorded
         * @param replayed {@code false} in the attempt whose work failed, {@code true} in retries
         * @throws NullPointerException if {@code key}, {@code errorType} or {@code recordedAt} is null
         */
        public Failed {
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(errorType, "errorType");
            Objects.requireNonNull(recordedAt, "recordedAt");
        }

        @Override
        public Status status() {
            return Status.FAILED;
        }

        /** @throws RecordedFailureException always */
        @Override
        public T value() {
            throw new RecordedFailureException(key, errorType, errorMessage);
        }
    }
}
