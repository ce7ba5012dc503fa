package dev.idempotency.http;

import dev.idempotency.PendingCall;
import java.util.Objects;
import java.util.function.BiFunction;
import org.jspecify.annotations.Nullable;

/**
 * A request that {@link HttpIdempotency#beginIn} has judged in the server's open transaction, for a
 * framework that runs the handler itself between a filter before it and one after it (Jakarta REST
 * filters): either answered now ({@link #answer()}: the layer's 400, 409, 422, a replay, a recorded
 * failure), and the handler must not run; or to run, its response then given to {@link #complete}
 * in the same transaction, before the server commits. The table of answers is
 * {@link HttpIdempotency}'s, decided there.
 *
 * <pre>{@code
 * PendingResponse pending = layer.beginIn(tx, request, scope);
 * if (pending.answered()) {
 *     return pending.answer();                    // roll back if answer().rollbackRequired()
 * }
 * Response response = handler(request, tx);       // throws: roll back
 * HttpAnswer answer = pending.complete(response); // then commit, or roll back if answer.rollbackRequired()
 * return answer;
 * }</pre>
 *
 * <p>Not thread-safe: one per request, used on the thread of its transaction.
 */
public final class PendingResponse {

    private final @Nullable HttpAnswer answer;
    private final @Nullable PendingCall<Response> claimed;
    private final BiFunction<PendingCall<Response>, Response, HttpAnswer> completion;
    private boolean completed;

    PendingResponse(@Nullable HttpAnswer answer, @Nullable PendingCall<Response> claimed,
                    BiFunction<PendingCall<Response>, Response, HttpAnswer> completion) {
        this.answer = answer;
        this.claimed = claimed;
        this.completion = completion;
    }

    /** @return whether the layer answered without the handler: send {@link #answer()}, run nothing */
    public boolean answered() {
        return answer != null;
    }

    /**
     * @return the layer's answer, when {@link #answered()}
     * @throws IllegalStateException if the handler is to run: its answer is what {@link #complete} returns
     */
    public HttpAnswer answer() {
        if (answer == null) {
            throw new IllegalStateException("the request was not answered by the layer: run the handler and call complete(response)");
        }
        return answer;
    }

    /**
     * Records the handler's response for the request's key in the transaction given to
     * {@code beginIn} (an unkeyed request records nothing), which the server then commits; on an
     * exception the claim is released: roll back. A 5xx when the layer releases server errors
     * ({@link HttpIdempotency#serverErrors()}) is not recorded: the claim is released and the answer
     * says {@link HttpAnswer#rollbackRequired()}: roll back, the handler's writes with it.
     *
     * @param response the handler's response, any status
     * @return the answer: the response, {@link HttpAnswer.Kind#EXECUTED}, {@link HttpAnswer.Kind#UNKEYED}
     *     or {@link HttpAnswer.Kind#RELEASED}
     * @throws IllegalStateException if the layer answered, or the response is completed already
     * @throws dev.idempotency.ResultTooLargeException if the response is over the key policy's result size limit: roll back
     * @throws dev.idempotency.IdempotencyException if the store fails: roll back
     */
    public HttpAnswer complete(Response response) {
        Objects.requireNonNull(response, "response");
        if (answer != null || completed) {
            throw new IllegalStateException(answer != null ? "the layer answered this request itself: send answer(), run nothing"
                    : "the response is completed already");
        }
        completed = true;
        return claimed == null ? new HttpAnswer(response, HttpAnswer.Kind.UNKEYED) : completion.apply(claimed, response);
    }

    /**
     * Undoes the key's claim in the transaction, for a server whose handler failed and that commits
     * anyway; one that rolls back need not. Does nothing if there is no claim, or it is completed.
     */
    public void release() {
        if (claimed != null && !completed) {
            completed = true;
            claimed.release();
        }
    }

    @Override
    public String toString() {
        return "PendingResponse[" + (answer != null ? answer.kind() : claimed != null ? "claimed " + claimed.key() : "unkeyed") + "]";
    }
}
