package dev.idempotency;

/**
 * The caller's work: the business change to run at most once per key. Like a
 * {@link java.util.concurrent.Callable}, but its checked exception type is a type parameter, so that
 * {@code execute} declares exactly what the work throws.
 *
 * @param <T> the result type
 * @param <X> the checked exception the work may throw ({@link RuntimeException} if none)
 */
@FunctionalInterface
public interface Work<T, X extends Exception> {

    /**
     * @return the result, recorded through a codec and replayed to retries
     * @throws X the work's own failure, which reaches the caller unchanged
     */
    T call() throws X;
}
