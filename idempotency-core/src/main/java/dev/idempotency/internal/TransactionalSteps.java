package dev.idempotency.internal;

import dev.idempotency.AbandonedClaimException;
import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.KeyPolicy;
import dev.idempotency.Outcome;
import dev.idempotency.ResultCodec;
import dev.idempotency.TransactionRequiredException;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import java.time.InstantSource;
import org.jspecify.annotations.Nullable;

/**
 * The pure steps of the transactional mode, as the core's kernel takes them, for an engine that runs
 * them in another execution model than the blocking one (the R2DBC engine, whose statements are
 * non-blocking): it does the I/O, and asks these steps for every decision, message and listener
 * call, so that none is written twice. Exported to that module alone; not an API.
 *
 * <p>Implementations are immutable and thread-safe.
 */
public interface TransactionalSteps {

    /**
     * @param policy the key policy
     * @param clock the clock
     * @param listener the listener
     * @return the steps of the core's kernel with these settings
     */
    static TransactionalSteps of(KeyPolicy policy, InstantSource clock, IdempotencyListener listener) {
        return Installed.factory().create(policy, clock, listener);
    }

    /**
     * @param key a key
     * @throws dev.idempotency.InvalidKeyException if the policy refuses it
     */
    void validate(IdempotencyKey key);

    /**
     * @param key the key
     * @param fingerprint the call's fingerprint
     * @return the claim of {@code key} now, for the policy's retention and lock timeout
     */
    ClaimRequest claimRequest(IdempotencyKey key, Fingerprint fingerprint);

    /**
     * @param claim a claim that did not acquire the key
     * @param fingerprint the call's fingerprint
     * @return whether the record found may be this transaction's own claim, made by the key's
     *     running work: if that work runs now, the call is nested
     */
    boolean mayBeOwnClaim(Claim claim, Fingerprint fingerprint);

    /**
     * @param key the key
     * @return the refusal of a call made by the key's own running work, in its transaction
     */
    RuntimeException nested(IdempotencyKey key);

    /**
     * @param key the key
     * @param fingerprint the call's fingerprint
     * @param codec the call's codec, or {@code null} for a built-in one
     * @param claim a claim that did not acquire the key
     * @param <T> the result type
     * @return its outcome: replayed, failed, mismatch or in progress
     * @throws AbandonedClaimException if the record is committed in progress without a holder
     */
    <T> Outcome<T> outcomeOf(IdempotencyKey key, Fingerprint fingerprint, @Nullable ResultCodec<T> codec, Claim claim);

    /**
     * @param key the key
     * @param codec the call's codec, or {@code null} for a built-in one
     * @param value the work's result
     * @param <T> the result type
     * @return what to record, and the outcome once it is
     * @throws dev.idempotency.ResultCodecException if it cannot be encoded
     * @throws dev.idempotency.ResultTooLargeException if it is over the policy's limit
     */
    <T> Recorded<T> executed(IdempotencyKey key, @Nullable ResultCodec<T> codec, @Nullable T value);

    /**
     * @param key the key
     * @param failure a final failure of the work
     * @param <T> the result type
     * @return what to record, and the outcome once it is
     */
    <T> Recorded<T> failed(IdempotencyKey key, Exception failure);

    /** @return whether the policy declares any failure final (then a savepoint is taken before the work) */
    boolean hasFinalFailures();

    /**
     * @param failure a failure of the work
     * @return whether the policy declares it final
     */
    boolean isFinal(Exception failure);

    /**
     * @param key the key
     * @param ended what the transaction's check found when the work returned
     * @return the refusal of the result of a work that ended its transaction
     */
    AbandonedClaimException abandonedByWork(IdempotencyKey key, TransactionRequiredException ended);

    /**
     * Tells the listener the outcome that reaches the caller.
     *
     * @param key the key
     * @param outcome the outcome
     * @param started when the call started, by {@link System#nanoTime()}
     */
    void heard(IdempotencyKey key, Outcome<?> outcome, long started);

    /**
     * Tells the listener the exception that reaches the caller.
     *
     * @param key the key
     * @param failure the exception
     * @param started when the call started, by {@link System#nanoTime()}
     */
    void heardError(IdempotencyKey key, Throwable failure, long started);

    /**
     * What the transactional mode writes for an outcome, and the outcome it answers once written.
     *
     * @param completion what to write
     * @param outcome the outcome
     * @param <T> the result type
     */
    record Recorded<T>(Completion completion, Outcome<T> outcome) {
    }

    /** Makes the core's steps; the core installs its one when its implementation class is loaded. */
    @FunctionalInterface
    interface Factory {
        /**
         * @param policy the key policy
         * @param clock the clock
         * @param listener the listener
         * @return the steps
         */
        TransactionalSteps create(KeyPolicy policy, InstantSource clock, IdempotencyListener listener);
    }

    /**
     * Where the core's factory is installed: the kernel is package-private in {@code dev.idempotency},
     * so its implementation of these steps installs itself here when its class is initialised, the
     * first time these steps are asked for.
     */
    final class Installed {
        private static final String IMPLEMENTATION = "dev.idempotency.KernelSteps";
        private static volatile @Nullable Factory factory;

        private Installed() {
        }

        /**
         * Installs the core's factory; only the first call counts.
         *
         * @param f the factory: the core's own
         * @throws IllegalArgumentException if it is not the core's implementation
         */
        public static synchronized void install(Factory f) {
            Class<?> type = f.getClass();
            if (type.getModule() != TransactionalSteps.class.getModule() || !type.getName().startsWith(IMPLEMENTATION)) {
                throw new IllegalArgumentException("only the core's " + IMPLEMENTATION + " installs the transactional steps, not "
                        + type.getName());
            }
            if (factory == null) {
                factory = f;
            }
        }

        static Factory factory() {
            Factory f = factory;
            if (f == null) {
                try {
                    Class.forName(IMPLEMENTATION, true, TransactionalSteps.class.getClassLoader());
                } catch (ClassNotFoundException e) {
                    throw new IllegalStateException("the core's transactional steps are missing: " + IMPLEMENTATION, e);
                }
                f = factory;
                if (f == null) {
                    throw new IllegalStateException(IMPLEMENTATION + " did not install its steps");
                }
            }
            return f;
        }
    }
}
