package dev.idempotency;

import java.util.Objects;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A leased operation in up to three phases, each with its own commit, for work that changes
 * something outside the database (run it with {@link LeasedIdempotency#run}):
 * <ol>
 *   <li><b>prepare</b> (optional): local writes, committed in one transaction together with the
 *       claim, such as inserting the charge as {@code pending}. Its value is recorded with the
 *       recovery point, through a codec.</li>
 *   <li><b>call</b>: outside any transaction, such as the payment provider's API, sending
 *       {@link LeaseAttempt#downstreamKey()} so that the provider deduplicates a repeated call.</li>
 *   <li><b>finish</b>: local writes committed together with the operation's result, and only if this
 *       attempt still holds the key (fencing), such as marking the charge {@code succeeded} with the
 *       provider's id. Without finishing writes, {@link Called#result(ResultCodec)} records the
 *       call's value as the result.</li>
 * </ol>
 * An attempt after a crash resumes at the first phase that did not commit: a committed prepare is
 * never run again, and its recorded value is handed to the call. The call is repeated (with the same
 * downstream key) unless the result was recorded. A failure of the call that the key policy declares
 * final gets its own finishing transaction ({@link Called#onFinalFailure}, such as marking the
 * charge {@code declined}), and is recorded and replayed.
 *
 * <pre>{@code
 * Phases<Connection, Receipt, Exception> charge = Phases
 *         .prepare((Connection tx) -> insertPendingCharge(tx, request), ResultCodec.longs())
 *         .call((attempt, chargeId) -> provider.charge(attempt.downstreamKey(), request))
 *         .onFinalFailure((tx, chargeId, failure) -> markDeclined(tx, chargeId))
 *         .finish((tx, chargeId, providerCharge) -> markSucceeded(tx, chargeId, providerCharge), receiptCodec);
 * }</pre>
 *
 * <p>Immutable and thread-safe if its functions are; one definition may serve many operations.
 *
 * @param <C> the transaction type
 * @param <T> the operation's result
 * @param <X> the checked exception the phases may throw ({@link RuntimeException} if none)
 */
public final class Phases<C, T, X extends Exception> {

    final Called<C, Object, Object, X> steps;
    final PhaseFinish<C, Object, Object, T, X> finish;

    /** The result's codec; {@code null} only for {@link LeasedIdempotency#lease}, to choose a built-in one by the result's type. */
    final @Nullable ResultCodec<T> codec;

    /** The name a {@link RecoveryWorker} knows this operation by; {@code null} but in the phases of {@link NamedPhases}. */
    final @Nullable String operation;

    private static final Pattern OPERATION_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

    @SuppressWarnings("unchecked")
    private Phases(Called<C, ?, ?, X> steps, PhaseFinish<C, ?, ?, T, X> finish, @Nullable ResultCodec<T> codec) {
        this((Called<C, Object, Object, X>) steps, (PhaseFinish<C, Object, Object, T, X>) finish, codec, null);
    }

    private Phases(Called<C, Object, Object, X> steps, PhaseFinish<C, Object, Object, T, X> finish, @Nullable ResultCodec<T> codec,
                   @Nullable String operation) {
        this.steps = steps;
        this.finish = finish;
        this.codec = codec;
        this.operation = operation;
    }

    /**
     * These phases under a stable name, so that a {@link RecoveryWorker} in any process can resume
     * an operation that its client abandoned: the name is recorded with the recovery point, in the
     * claim's transaction, and the worker resumes the operation with the phases registered under
     * that name. Named phases are of their own type, which only an engine over a store that lists
     * the named operations in progress runs ({@link RecoveringLeasedIdempotency}): over another
     * store they do not compile. The operation must have a prepare phase, whose recorded value is
     * all that a resumed call and finish are given: they must take everything they need from it
     * (and from their own services), never from the request of the client that started it.
     *
     * @param operation the name: 1 to 64 letters, digits, {@code .}, {@code _} or {@code -}, starting
     *     with a letter or digit; keep it stable across deploys
     * @return the named phases
     * @throws IllegalArgumentException if the name is not of that form, or the phases have no prepare
     */
    public NamedPhases<C, T, X> named(String operation) {
        Objects.requireNonNull(operation, "operation");
        if (!OPERATION_NAME.matcher(operation).matches()) {
            throw new IllegalArgumentException("operation name '" + operation + "' is not 1 to 64 letters, digits, '.', '_' or"
                    + " '-' starting with a letter or digit");
        }
        if (!hasPrepare()) {
            throw new IllegalArgumentException("operation '" + operation + "' has no prepare phase: a named operation is resumed"
                    + " from its prepare's recorded value, so start it with Phases.prepare(...)");
        }
        return new NamedPhases<>(new Phases<>(steps, finish, codec, operation), operation);
    }

    /**
     * Starts an operation with a prepare phase.
     *
     * @param prepare the local writes committed with the claim; its value is recorded
     * @param codec encodes the prepare value into the recovery point and decodes it on resume
     * @param <C> the transaction type
     * @param <P> the prepare value
     * @param <X> the checked exception the phases may throw
     * @return the next step: the call
     */
    public static <C, P, X extends Exception> Prepared<C, P, X> prepare(TxWork<C, P, X> prepare, ResultCodec<P> codec) {
        return new Prepared<>(Objects.requireNonNull(prepare, "prepare"), Objects.requireNonNull(codec, "codec"));
    }

    /**
     * Starts an operation without a prepare phase: the claim commits alone.
     *
     * @param call the call, outside any transaction
     * @param <C> the transaction type
     * @param <V> the call's value
     * @param <X> the checked exception the phases may throw
     * @return the next step: finish, or record the call's value
     */
    public static <C, V, X extends Exception> Called<C, Void, V, X> call(LeasedWork<V, X> call) {
        Objects.requireNonNull(call, "call");
        return new Called<>(null, null, (attempt, none) -> call.call(attempt), null);
    }

    /** @return whether the operation has a prepare phase */
    boolean hasPrepare() {
        return steps.prepare != null;
    }

    /**
     * An operation with its prepare phase, waiting for its call.
     *
     * @param <C> the transaction type
     * @param <P> the prepare value
     * @param <X> the checked exception the phases may throw
     */
    public static final class Prepared<C, P, X extends Exception> {
        private final TxWork<C, P, X> prepare;
        private final ResultCodec<P> codec;

        private Prepared(TxWork<C, P, X> prepare, ResultCodec<P> codec) {
            this.prepare = prepare;
            this.codec = codec;
        }

        /**
         * @param call the call, outside any transaction, given the prepare value
         * @param <V> the call's value
         * @return the next step: finish, or record the call's value
         */
        public <V> Called<C, P, V, X> call(PhaseCall<P, V, X> call) {
            return new Called<>(prepare, codec, Objects.requireNonNull(call, "call"), null);
        }
    }

    /**
     * An operation with its call, waiting for how it finishes.
     *
     * @param <C> the transaction type
     * @param <P> the prepare value ({@code Void} without a prepare phase)
     * @param <V> the call's value
     * @param <X> the checked exception the phases may throw
     */
    public static final class Called<C, P, V, X extends Exception> {
        final @Nullable TxWork<C, P, X> prepare;
        final @Nullable ResultCodec<P> prepareCodec;
        final PhaseCall<P, V, X> call;
        final @Nullable PhaseFailure<C, P, X> onFinalFailure;

        private Called(@Nullable TxWork<C, P, X> prepare, @Nullable ResultCodec<P> prepareCodec, PhaseCall<P, V, X> call,
                @Nullable PhaseFailure<C, P, X> onFinalFailure) {
            this.prepare = prepare;
            this.prepareCodec = prepareCodec;
            this.call = call;
            this.onFinalFailure = onFinalFailure;
        }

        /**
         * Local writes for a final failure of the call (one the key policy declares final), committed
         * together with the recorded failure, such as marking the charge {@code declined}. Without
         * it, the failure is recorded alone.
         *
         * @param onFinalFailure the writes, given the prepare value and the failure
         * @return the same step, with these writes
         */
        public Called<C, P, V, X> onFinalFailure(PhaseFailure<C, P, X> onFinalFailure) {
            return new Called<>(prepare, prepareCodec, call, Objects.requireNonNull(onFinalFailure, "onFinalFailure"));
        }

        /**
         * Finishes with local writes committed together with the result.
         *
         * @param finish the writes, given the prepare value and the call's value; returns the result
         * @param codec encodes the result for the record and decodes it for a replay
         * @param <T> the result
         * @return the operation
         */
        public <T> Phases<C, T, X> finish(PhaseFinish<C, P, V, T, X> finish, ResultCodec<T> codec) {
            return new Phases<>(this, Objects.requireNonNull(finish, "finish"), Objects.requireNonNull(codec, "codec"));
        }

        /**
         * Finishes without local writes: the call's value is the result.
         *
         * @param codec encodes the call's value for the record and decodes it for a replay
         * @return the operation
         */
        public Phases<C, V, X> result(ResultCodec<V> codec) {
            return recorded(Objects.requireNonNull(codec, "codec"));
        }

        /** As {@link #result}, with {@code null} to choose a built-in codec by the result's type. */
        Phases<C, V, X> recorded(ResultCodec<V> codec) {
            PhaseFinish<C, P, V, V, X> recordCall = (tx, prepared, called) -> called;
            return new Phases<>(this, recordCall, codec);
        }
    }

    /**
     * The call phase, given the prepare value.
     *
     * @param <P> the prepare value
     * @param <V> the call's value
     * @param <X> the checked exception it may throw
     */
    @FunctionalInterface
    public interface PhaseCall<P, V, X extends Exception> {
        /**
         * @param attempt the attempt: its number, the downstream key, the lease
         * @param prepared the prepare value, as recorded
         * @return the call's value
         * @throws X on failure
         */
        V call(LeaseAttempt attempt, P prepared) throws X;
    }

    /**
     * The finish phase.
     *
     * @param <C> the transaction type
     * @param <P> the prepare value
     * @param <V> the call's value
     * @param <T> the result
     * @param <X> the checked exception it may throw
     */
    @FunctionalInterface
    public interface PhaseFinish<C, P, V, T, X extends Exception> {
        /**
         * @param tx the transaction that also records the result
         * @param prepared the prepare value, as recorded
         * @param called the call's value
         * @return the operation's result
         * @throws X on failure
         */
        T finish(C tx, P prepared, V called) throws X;
    }

    /**
     * The writes for a final failure of the call.
     *
     * @param <C> the transaction type
     * @param <P> the prepare value
     * @param <X> the checked exception it may throw
     */
    @FunctionalInterface
    public interface PhaseFailure<C, P, X extends Exception> {
        /**
         * @param tx the transaction that also records the failure
         * @param prepared the prepare value, as recorded
         * @param failure the call's final failure
         * @throws X on failure
         */
        void onFinalFailure(C tx, P prepared, Exception failure) throws X;
    }
}
