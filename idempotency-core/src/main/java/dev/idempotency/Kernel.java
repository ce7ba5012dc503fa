package dev.idempotency;

import dev.idempotency.internal.BuiltInCodecs;
import dev.idempotency.internal.FailureRecords;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.LeasedCompletion;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.StoredRecord;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.temporal.ChronoUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The steps that every mode shares, each written here alone: building a claim request, turning a
 * claim or a record into an {@link Outcome}, encoding and size-checking a value for the record,
 * turning a result or a final failure into what the store records, and telling the listener (through
 * {@link #heard()}). The modes ({@link TransactionalProtocol}, {@link ChunkProtocol},
 * {@link WriteLastProtocol}, {@link LeaseProtocol}) put these steps in their own order; the public
 * engines ({@link Idempotency}, {@link ManagedIdempotency}) only validate and hand over.
 *
 * <p>Immutable and thread-safe.
 *
 * @param <C> the store's transaction type
 */
final class Kernel<C> {

    private static final Logger log = LoggerFactory.getLogger(Kernel.class);

    /** What a result that cannot be recorded leaves in the caller's transaction. */
    static final String CLAIM_RELEASED = "the claim was released: roll back the transaction to undo the work's writes";
    /** What a result that cannot be recorded leaves in a transaction that {@link ManagedIdempotency} runs. */
    static final String ROLLED_BACK = "the library rolled back the transaction it ran, the work's writes with it: nothing of the key"
            + " was recorded";

    private final IdempotencyStore<C> store;
    private final KeyPolicy policy;
    private final InstantSource clock;
    private final ListenerCalls heard;

    Kernel(IdempotencyStore<C> store, KeyPolicy policy, InstantSource clock, IdempotencyListener listener) {
        this.store = store;
        this.policy = policy;
        this.clock = clock;
        this.heard = new ListenerCalls(listener);
    }

    IdempotencyStore<C> store() {
        return store;
    }

    KeyPolicy policy() {
        return policy;
    }

    /** What tells the listener; every mode reports through it. */
    ListenerCalls heard() {
        return heard;
    }

    /**
     * The current time in whole milliseconds, the precision stores keep: a first outcome then
     * reports the same {@code recordedAt} as every replay of its record.
     */
    Instant now() {
        return clock.instant().truncatedTo(ChronoUnit.MILLIS);
    }

    // ---- requests -----------------------------------------------------------------------------------

    /** The claim of {@code key} at {@code now}, kept for the policy's retention, waiting up to its lock timeout. */
    ClaimRequest claimRequest(IdempotencyKey key, Fingerprint fingerprint, Instant now) {
        return new ClaimRequest(key, fingerprint, now, now.plus(policy.retention()), policy.lockTimeout());
    }

    /** The lease claim of {@code key} by {@code ownerToken}, judged by the store's clock. */
    LeaseRequest leaseRequest(IdempotencyKey key, Fingerprint fingerprint, String ownerToken, Duration lease) {
        return new LeaseRequest(key, fingerprint, ownerToken, lease, policy.retention(), policy.lockTimeout());
    }

    // ---- answers ------------------------------------------------------------------------------------

    /**
     * The outcome of a claim that did not acquire the key: the record found answers, and a key held
     * past the lock timeout is {@link Outcome.InProgress}.
     */
    <T> Outcome<T> outcomeOf(IdempotencyKey key, Fingerprint fingerprint, ResultCodec<T> codec, Claim claim) {
        if (claim instanceof Claim.Existing existing) {
            return outcomeOf(key, fingerprint, codec, existing.record());
        }
        if (claim instanceof Claim.Busy) {
            log.debug("Key {} is held by another transaction past the lock timeout of {}", key, policy.lockTimeout());
            return new Outcome.InProgress<>(key);
        }
        throw new IllegalStateException("an acquired claim has no outcome of its own: its work runs");
    }

    /**
     * The outcome of a lease claim that did not acquire the key: the record found answers; a live
     * lease of another fingerprint is {@link Outcome.Mismatch}, of the same one {@link Outcome.InProgress}
     * with its end and remaining time by the store's clock; a key held past the lock timeout is
     * {@link Outcome.InProgress} too.
     */
    <T> Outcome<T> outcomeOf(IdempotencyKey key, Fingerprint fingerprint, ResultCodec<T> codec, LeaseClaim claim) {
        if (claim instanceof LeaseClaim.Existing existing) {
            return outcomeOf(key, fingerprint, codec, existing.record());
        }
        if (claim instanceof LeaseClaim.Held held) {
            if (!held.fingerprint().equals(fingerprint)) {
                log.debug("Key {} is held in lease mode with another fingerprint", key);
                return new Outcome.Mismatch<>(key);
            }
            log.debug("Key {} is held by another attempt; lease until {}, {} from the store's now", key, held.leaseUntil(),
                    held.remaining());
            return new Outcome.InProgress<>(key, held.leaseUntil(), held.remaining(), held.expiresAt());
        }
        if (claim instanceof LeaseClaim.Busy) {
            log.debug("Key {} is held by another transaction past the lock timeout of {}", key, policy.lockTimeout());
            return new Outcome.InProgress<>(key);
        }
        throw new IllegalStateException("an acquired lease has no outcome of its own: its call runs");
    }

    /** The outcome that a committed record gives a call with {@code fingerprint} and {@code codec} ({@code null}: a built-in one). */
    <T> Outcome<T> outcomeOf(IdempotencyKey key, Fingerprint fingerprint, ResultCodec<T> codec, StoredRecord record) {
        if (!record.fingerprint().equals(fingerprint)) {
            log.debug("Key {} was used with another fingerprint", key);
            return new Outcome.Mismatch<>(key);
        }
        Instant recordedAt = record.completedAt() != null ? record.completedAt() : record.createdAt();
        switch (record.status()) {
            case IN_PROGRESS:
                return fromInProgressRecord(key, record);
            case FAILED:
                FailureRecords.Failure failure = FailureRecords.decode(record.result());
                return new Outcome.Failed<>(key, failure.type(), failure.message(), recordedAt, true);
            case COMPLETED:
            default:
                return new Outcome.Replayed<>(key, decode(key, codec, record), recordedAt, record.expiresAt());
        }
    }

    /**
     * A committed record that is still in progress. Held in lease mode, it is {@link Outcome.InProgress}.
     * Otherwise no open transaction holds it (an open holder's uncommitted claim is waited for, never
     * returned as existing): its claim was committed without its result, because a work committed,
     * rolled back or switched auto-commit mid-way. Nothing will ever complete it, so it is refused by
     * name instead of being answered {@link Outcome.InProgress} until its retention ends.
     */
    private static <T> Outcome<T> fromInProgressRecord(IdempotencyKey key, StoredRecord record) {
        if (record.leaseUntil() != null) {
            log.debug("Key {} is held in lease mode until {}", key, record.leaseUntil());
            return new Outcome.InProgress<>(key, record.leaseUntil(), null, record.expiresAt());
        }
        log.warn("Key {} has a committed record still in progress, claimed at {}: a work ended its caller's transaction", key,
                record.createdAt());
        throw new AbandonedClaimException(key, "the key's record is committed but still in progress (claimed at "
                + record.createdAt() + ", retained until " + record.expiresAt() + "), and no transaction holds it", null);
    }

    @SuppressWarnings("unchecked")
    private static <T> @Nullable T decode(IdempotencyKey key, @Nullable ResultCodec<T> codec, StoredRecord record) {
        if (record.result() == null) {
            return null;
        }
        ResultCodec<?> use = codec;
        if (use == null) {
            use = BuiltInCodecs.byName(record.codec()).orElseThrow(() -> new ResultCodecException(key,
                    "the result was recorded with codec '" + record.codec() + "', which is not a built-in one;"
                            + " give the call that codec: IdempotentCall.of(key, codec)", null));
        } else if (!use.name().equals(record.codec())) {
            throw new ResultCodecException(key, "the result was recorded with " + BuiltInCodecs.describe(record.codec())
                    + " but this call " + BuiltInCodecs.expectation(use) + ": the result's type or format changed since the"
                    + " record was written. The work did not run and nothing was written; the record answers only through"
                    + " its own codec until its retention ends", null);
        }
        try {
            return (T) use.decode(record.result());
        } catch (Exception e) {
            throw new ResultCodecException(key, "codec '" + use.name() + "' failed to decode the recorded result", e);
        }
    }

    // ---- what is recorded ---------------------------------------------------------------------------

    /** A value encoded for the record: the codec's name and the bytes ({@code null} for a {@code null} value). */
    record Encoded(String codec, byte @Nullable [] bytes) {
    }

    /** What a transactional mode writes for an outcome, and the outcome it answers once that is committed. */
    record Recorded<T>(Completion completion, Outcome<T> outcome) {
    }

    /**
     * Encodes a value for the record with {@code codec}, or the built-in codec of its type when
     * {@code codec} is {@code null}, and checks it against the size limit. {@code what} is the value,
     * as a message names it; {@code aftermath} says what the library did when the value cannot be
     * recorded, true for the mode that calls ({@link #CLAIM_RELEASED} in the caller's transaction,
     * {@link #ROLLED_BACK} in one the library runs, lease mode's own).
     */
    @SuppressWarnings("unchecked")
    Encoded encode(IdempotencyKey key, @Nullable ResultCodec<?> codec, @Nullable Object value, String what, String aftermath) {
        ResultCodec<?> used = codec != null ? codec : chooseCodec(key, value, aftermath);
        if (value == null) {
            return new Encoded(used.name(), null);
        }
        byte[] bytes;
        try {
            bytes = ((ResultCodec<Object>) used).encode(value);
        } catch (Exception e) {
            throw new ResultCodecException(key, "codec '" + used.name() + "' failed to encode the result of type "
                    + value.getClass().getName() + ". " + sentence(aftermath), e);
        }
        if (bytes == null) {
            throw new ResultCodecException(key, "codec '" + used.name() + "' encoded a result as null. " + sentence(aftermath), null);
        }
        if (bytes.length > policy.maxResultBytes()) {
            throw new ResultTooLargeException(key, what, bytes.length, policy.maxResultBytes(), aftermath);
        }
        return new Encoded(used.name(), bytes);
    }

    /** The completion of a work's result, timed now, and its {@link Outcome.Executed}; {@code aftermath} as for {@link #encode}. */
    <T> Recorded<T> executed(IdempotencyKey key, ResultCodec<T> codec, T value, String aftermath) {
        Encoded encoded = encode(key, codec, value, ResultTooLargeException.RESULT, aftermath);
        Instant at = now();
        return new Recorded<>(new Completion(key, RecordStatus.COMPLETED, encoded.codec(), encoded.bytes(), at,
                at.plus(policy.retention())), new Outcome.Executed<>(key, value));
    }

    /** The completion of a final failure, timed now, and its {@link Outcome.Failed}. */
    <T> Recorded<T> failed(IdempotencyKey key, Exception failure) {
        FailureRecords.Failure recorded = failureOf(failure);
        Instant at = now();
        return new Recorded<>(new Completion(key, RecordStatus.FAILED, FailureRecords.CODEC, recorded.encode(), at,
                at.plus(policy.retention())), failedOutcome(key, recorded, at));
    }

    /** What lease mode records for a result, timed by the store's clock. */
    LeasedCompletion leasedResult(IdempotencyKey key, Encoded encoded) {
        return new LeasedCompletion(key, RecordStatus.COMPLETED, encoded.codec(), encoded.bytes(), policy.retention());
    }

    /** What lease mode records for a final failure, timed by the store's clock. */
    LeasedCompletion leasedFailure(IdempotencyKey key, FailureRecords.Failure failure) {
        return new LeasedCompletion(key, RecordStatus.FAILED, FailureRecords.CODEC, failure.encode(), policy.retention());
    }

    /** A final failure as it is recorded: its type and message, cut to the size limit. */
    FailureRecords.Failure failureOf(Exception failure) {
        return FailureRecords.of(failure, policy.maxResultBytes());
    }

    /** The first answer to a final failure recorded at {@code at}. */
    <T> Outcome<T> failedOutcome(IdempotencyKey key, FailureRecords.Failure failure, Instant at) {
        return new Outcome.Failed<>(key, failure.type(), failure.message(), at, false);
    }

    // ---- final failures -----------------------------------------------------------------------------

    /** @return whether the policy declares any failure final; without, no mode pays for a savepoint */
    boolean hasFinalFailures() {
        return policy.hasFinalFailures();
    }

    /** @return whether the policy declares {@code failure} final; a predicate that throws says no, and is logged */
    boolean isFinal(Exception failure) {
        try {
            return policy.isFinalFailure(failure);
        } catch (RuntimeException predicateFailure) {
            failure.addSuppressed(predicateFailure);
            log.warn("The final-failure predicate of the key policy threw; the failure is treated as not final", predicateFailure);
            return false;
        }
    }

    private static ResultCodec<?> chooseCodec(IdempotencyKey key, Object value, String aftermath) {
        if (value == null) {
            return BuiltInCodecs.NONE;
        }
        return BuiltInCodecs.forValue(value).orElseThrow(() -> new ResultCodecException(key,
                "no built-in codec for results of type " + value.getClass().getName()
                        + "; give the call one, e.g. IdempotentCall.of(key, ResultCodec.of(\"receipt-v1\", toJson, fromJson)). "
                        + sentence(aftermath), null));
    }

    /** @return {@code clause} as a sentence of its own: capitalised */
    private static String sentence(String clause) {
        return Character.toUpperCase(clause.charAt(0)) + clause.substring(1);
    }

    @Override
    public String toString() {
        return "store=" + store + ", policy=" + policy;
    }
}
