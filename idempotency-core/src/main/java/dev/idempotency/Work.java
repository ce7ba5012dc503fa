package dev.idempotency;

/**
 * The caller's work: the business change to run at most once per key. Like a
 * {@link java.util.concurrent.Callable}, but its checked exception type is a type parameter, so that
 * {@code execute} declares exactly what the work throws.
 *
 * <p><b>The work must leave the transaction to its caller.</b> It runs inside the caller's
 * transaction, which already holds the key's uncommitted claim: it must not commit it, roll it
 * back, close its connection, or switch auto-commit on. Any of these commits the claim without its
 * result (or drops it), and the caller's own commit or rollback can no longer keep the record and
 * the business change together. The engine refuses to record a result when it can see that the
 * transaction ended (a connection left in auto-commit mode or closed), and every later attempt
 * with the key that finds such a stranded claim fails with {@link AbandonedClaimException}, naming
 * this cause, until the record is deleted or its retention ends.
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
