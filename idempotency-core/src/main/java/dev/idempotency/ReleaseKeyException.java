package dev.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * Thrown by a work to end its attempt without recording anything of the key, carrying what the
 * caller answers instead: the HTTP layer throws it for a handler's 5xx response when its server
 * errors are released rather than recorded. The engine treats it as a failure that is never final,
 * whatever the key policy says ({@link KeyPolicy#isFinalFailure} is {@code false} for it), and
 * rethrows it unchanged:
 * <ul>
 *   <li>transactional mode, in the caller's transaction: the claim is released; roll the
 *       transaction back, so that the work's writes go with it;</li>
 *   <li>in a transaction the library runs ({@code ManagedIdempotency.execute}): that transaction is
 *       rolled back, the claim and the work's writes with it;</li>
 *   <li>lease mode: the lease is ended, so that the next attempt takes the key over at once (the
 *       record stays in progress, without a result, until then).</li>
 * </ul>
 * The next attempt with the key runs the work again. Listeners hear it as any failure of the work
 * ({@link IdempotencyListener#onError}), its message saying why the key was released.
 *
 * <p>The answer is carried as it is, neither copied nor serialized. Immutable once thrown; its
 * answer is as thread-safe as the object given.
 */
public final class ReleaseKeyException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final transient @Nullable Object answer;

    /**
     * @param reason why the key is released, for the logs
     * @param answer what the caller answers instead of a recorded result, or {@code null}
     */
    public ReleaseKeyException(String reason, @Nullable Object answer) {
        super(reason, null, false, false); // control flow: no stack trace to fill
        this.answer = answer;
    }

    /** @return what the caller answers instead of a recorded result, or {@code null} */
    public @Nullable Object answer() {
        return answer;
    }
}
