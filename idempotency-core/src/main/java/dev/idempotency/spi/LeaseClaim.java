package dev.idempotency.spi;

import dev.idempotency.Fingerprint;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/** What {@link LeasingStore#claimLease} found. */
public sealed interface LeaseClaim permits LeaseClaim.Acquired, LeaseClaim.Existing, LeaseClaim.Held, LeaseClaim.Busy {

    /** @return the claim that means "another transaction held the key's row past the lock timeout" */
    static LeaseClaim busy() {
        return Busy.INSTANCE;
    }

    /**
     * The request's owner token now holds the key, under a lease until {@code leaseUntil}; the claim
     * is written in the transaction and holds once it commits.
     *
     * @param attempt which attempt this is: 1 for a new record, one more than the last for a take-over
     *     of an ended lease
     * @param now the store's current time when it claimed
     * @param leaseUntil the end of the lease, by the store's clock
     * @param resumeFrom the recovery point an earlier attempt committed, or {@code null}
     */
    record Acquired(int attempt, Instant now, Instant leaseUntil, @Nullable RecoveryPoint resumeFrom) implements LeaseClaim {
        /**
         * @param attempt which attempt this is, at least 1
         * @param now the store's current time
         * @param leaseUntil the end of the lease
         * @param resumeFrom the recovery point an earlier attempt committed, or {@code null}
         * @throws NullPointerException if {@code now} or {@code leaseUntil} is null
         * @throws IllegalArgumentException if {@code attempt} is less than 1 or the lease ends before now
         */
        public Acquired {
            Objects.requireNonNull(now, "now");
            Objects.requireNonNull(leaseUntil, "leaseUntil");
            if (attempt < 1) {
                throw new IllegalArgumentException("attempt must be at least 1, was " + attempt);
            }
            if (leaseUntil.isBefore(now)) {
                throw new IllegalArgumentException("leaseUntil " + leaseUntil + " is before now " + now);
            }
        }
    }

    /**
     * A completed or failed, unexpired record of the key.
     *
     * @param record the record
     */
    record Existing(StoredRecord record) implements LeaseClaim {
        /**
         * @param record the record
         * @throws NullPointerException if {@code record} is null
         * @throws IllegalArgumentException if the record is in progress (that is {@link Held})
         */
        public Existing {
            Objects.requireNonNull(record, "record");
            if (record.status() == RecordStatus.IN_PROGRESS) {
                throw new IllegalArgumentException("a record in progress is Held, not Existing");
            }
        }
    }

    /**
     * Another owner holds the key under a lease that has not ended (or, for a request of another
     * fingerprint, held it).
     *
     * @param fingerprint the fingerprint of the request that holds it
     * @param leaseUntil the end of its lease, by the store's clock
     * @param attempts how many attempts have claimed the key so far
     * @param now the store's current time when it found the lease, read by the same clock (for a
     *     database, in the same transaction) that judged the lease live: {@link #remaining()} is
     *     measured by that one clock
     * @param expiresAt until when the record in progress is kept (its {@link StoredRecord#expiresAt()}),
     *     or {@code null} if the store does not report it; reaches {@code Outcome.InProgress.expiresAt}
     */
    record Held(Fingerprint fingerprint, Instant leaseUntil, int attempts, Instant now, @Nullable Instant expiresAt)
            implements LeaseClaim {
        /**
         * @param fingerprint the fingerprint of the request that holds it
         * @param leaseUntil the end of its lease
         * @param attempts how many attempts have claimed the key so far
         * @param now the store's current time when it found the lease
         * @param expiresAt until when the record in progress is kept, or {@code null}
         * @throws NullPointerException if a component but {@code expiresAt} is null
         */
        public Held {
            Objects.requireNonNull(fingerprint, "fingerprint");
            Objects.requireNonNull(leaseUntil, "leaseUntil");
            Objects.requireNonNull(now, "now");
        }

        /**
         * A lease found without the record's expiry.
         *
         * @param fingerprint the fingerprint of the request that holds it
         * @param leaseUntil the end of its lease
         * @param attempts how many attempts have claimed the key so far
         * @param now the store's current time when it found the lease
         * @throws NullPointerException if a component is null
         */
        public Held(Fingerprint fingerprint, Instant leaseUntil, int attempts, Instant now) {
            this(fingerprint, leaseUntil, attempts, now, null);
        }

        /** @return how long the lease still runs from {@link #now()}, by the store's clock; zero if it has ended */
        public Duration remaining() {
            Duration left = Duration.between(now, leaseUntil);
            return left.isNegative() ? Duration.ZERO : left;
        }
    }

    /** Another open transaction held the key's row for longer than the lock timeout. */
    final class Busy implements LeaseClaim {
        private static final Busy INSTANCE = new Busy();

        private Busy() {
        }

        @Override
        public String toString() {
            return "LeaseClaim.Busy";
        }
    }
}
