package dev.idempotency;

/**
 * The call of a leased operation: runs outside any transaction, typically against a service that
 * deduplicates on {@link LeaseAttempt#downstreamKey()}.
 *
 * @param <T> its result
 * @param <X> the checked exception it may throw ({@link RuntimeException} if none)
 */
@FunctionalInterface
public interface LeasedWork<T, X extends Exception> {

    /**
     * @param attempt the attempt: its number, the downstream key, the lease
     * @return the result
     * @throws X on failure
     */
    T call(LeaseAttempt attempt) throws X;
}
