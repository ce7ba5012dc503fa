package dev.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * Transactional mode in two steps, for a caller that cannot hand the engine its work to run (a
 * framework whose filters see the request before the work and its result after it):
 * {@link Idempotency#begin} claims the key in the caller's open transaction now, or answers without
 * claiming it; {@link #complete} records the work's result later, in the same transaction. The
 * steps are {@code execute}'s, without a final failure recorded: the work runs between them, and
 * when it fails the caller rolls the transaction back, which takes the claim with it (or calls
 * {@link #release} first, if it must commit anyway).
 *
 * <pre>{@code
 * PendingCall<String> pending = engine.begin(call, tx);
 * if (!pending.claimed()) {
 *     return pending.answer();              // replayed, mismatch, in progress, recorded failure
 * }
 * String result = work(tx);                 // a failure: roll tx back
 * return pending.complete(result);          // then commit tx
 * }</pre>
 *
 * <p>Not thread-safe: one per call, used on the thread of its transaction. The engine's listener
 * hears the outcome when it is known: when {@code begin} answers, or when {@code complete} records.
 *
 * @param <T> the result type
 */
public final class PendingCall<T> {

    private final Kernel<?> kernel;
    private final Runnable release;
    private final Recorder<T> recorder;
    private final IdempotencyKey key;
    private final @Nullable Outcome<T> answer;
    private boolean open;

    /** Records a claimed call's result in its transaction. */
    @FunctionalInterface
    interface Recorder<T> {
        Outcome<T> record(@Nullable T value);
    }

    PendingCall(Kernel<?> kernel, IdempotencyKey key, @Nullable Outcome<T> answer, Recorder<T> recorder, Runnable release) {
        this.kernel = kernel;
        this.key = key;
        this.answer = answer;
        this.recorder = recorder;
        this.release = release;
        this.open = answer == null;
    }

    /** @return the key, validated */
    public IdempotencyKey key() {
        return key;
    }

    /**
     * @return whether {@code begin} claimed the key in the caller's transaction: run the work, then
     *     {@link #complete} it; otherwise {@link #answer()} is the key's answer and nothing may run
     */
    public boolean claimed() {
        return answer == null;
    }

    /**
     * @return the key's answer when it was not claimed: {@link Outcome.Replayed},
     *     {@link Outcome.Mismatch}, {@link Outcome.InProgress} (roll the transaction back) or
     *     {@link Outcome.Failed}
     * @throws IllegalStateException if the key was claimed: its answer is what {@link #complete} returns
     */
    public Outcome<T> answer() {
        if (answer == null) {
            throw new IllegalStateException("key " + key + " was claimed: run the work and call complete(result) for its outcome");
        }
        return answer;
    }

    /**
     * Records the work's result in the transaction that {@code begin} claimed the key in, which the
     * caller then commits. On any exception the claim is released: roll back.
     *
     * @param value the work's result
     * @return {@link Outcome.Executed}
     * @throws IllegalStateException if the key was not claimed, or the call is completed or released already
     * @throws AbandonedClaimException if the transaction can no longer carry the result
     * @throws ResultCodecException if the result cannot be encoded
     * @throws ResultTooLargeException if the encoded result is over the policy's limit
     * @throws IdempotencyStoreException if the store fails
     */
    public Outcome<T> complete(@Nullable T value) {
        if (!open) {
            throw new IllegalStateException("key " + key + (claimed() ? " is completed or released already" : " was not claimed: its"
                    + " answer is answer()"));
        }
        open = false;
        return kernel.heard().single(key, () -> recorder.record(value));
    }

    /**
     * Undoes the claim in the transaction, for a caller whose work failed and who commits anyway; a
     * caller who rolls back need not. Does nothing if the key was not claimed, or the call is
     * completed or released already.
     *
     * @throws IdempotencyStoreException if the store fails: roll back
     */
    public void release() {
        if (open) {
            open = false;
            release.run();
        }
    }

    @Override
    public String toString() {
        return "PendingCall[" + key + (answer != null ? ", " + answer.status() : open ? ", claimed" : ", closed") + "]";
    }
}
