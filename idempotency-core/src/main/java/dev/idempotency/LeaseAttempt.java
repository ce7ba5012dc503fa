package dev.idempotency;

import java.time.Duration;
import java.time.Instant;

/**
 * What the call of a leased operation knows about its attempt. It runs outside any transaction,
 * while its owner token holds the key's lease.
 *
 * <p>Thread-safe: the call may hand it to a thread that extends the lease while it waits.
 */
public interface LeaseAttempt {

    /** @return the operation's key */
    IdempotencyKey key();

    /** @return which attempt this is: 1 for the first, one more for each take-over of an ended lease */
    int number();

    /**
     * The key to send downstream (a payment provider's {@code Idempotency-Key}): derived
     * deterministically from {@link #key()}, so every attempt of the operation sends the same one
     * and the provider deduplicates a call repeated after a crash. Send it as it is
     * ({@code toString()} or {@link DownstreamKey#id()}): a hex digest that shows neither the scope
     * nor the client's key id.
     *
     * @return {@code DownstreamKey.of(key(), "downstream")}
     */
    default DownstreamKey downstreamKey() {
        return DownstreamKey.of(key(), "downstream");
    }

    /**
     * @param name which downstream service, when the call reaches more than one
     * @return {@code DownstreamKey.of(key(), name)}, the same on every attempt
     * @throws NullPointerException if {@code name} is {@code null}
     */
    default DownstreamKey downstreamKey(String name) {
        return DownstreamKey.of(key(), name);
    }

    /** @return when the lease ends, by the store's clock, as last claimed or extended */
    Instant leaseUntil();

    /** @return whether an earlier attempt's committed phase was resumed (its prepare did not run again) */
    boolean resumed();

    /**
     * Extends the lease to {@code lease} from the store's now, in a short transaction of its own.
     * Call it from a long call before the lease ends.
     *
     * @param lease the new lease, from now: 100 milliseconds to 1 day
     * @return the new end of the lease
     * @throws LeaseLostException if another attempt took the key over: stop, the result will be refused
     * @throws IllegalStateException if this attempt is over: its outcome is recorded, or it failed and
     *     its lease was ended (the message says which); an extender thread should stop when the call
     *     returns
     * @throws IllegalArgumentException if {@code lease} is out of range
     * @throws IdempotencyStoreException if the store fails
     */
    Instant extend(Duration lease);
}
