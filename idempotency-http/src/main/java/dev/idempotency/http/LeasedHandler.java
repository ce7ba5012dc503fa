package dev.idempotency.http;

import dev.idempotency.LeaseAttempt;
import org.jspecify.annotations.Nullable;

/**
 * A request handler with effects outside the database (a payment provider, an e-mail sender), run
 * in lease mode: outside any transaction, under a lease on the key, its response recorded only if
 * the attempt still holds the key.
 *
 * <p>Send {@link LeaseAttempt#downstreamKey()} as the provider's own idempotency key, so that the
 * provider deduplicates a call that a retry repeats. Every response it returns is recorded,
 * whatever its status, a 5xx too. If it throws, nothing is recorded and the lease ends at once, so
 * that a retry runs it again without waiting: throw, rather than return a 5xx, for a failure that a
 * retry may mend.
 *
 * <p>The server calls it from many threads at once: it must be thread-safe.
 *
 * @param <X> the checked exception it may throw
 */
@FunctionalInterface
public interface LeasedHandler<X extends Exception> {

    /**
     * @param request the request
     * @param attempt the attempt holding the key; {@code null} when the request is not keyed (a safe
     *     method, or no key where none is required), and nothing is recorded
     * @return the response; never {@code null}
     * @throws X a failure: nothing is recorded
     */
    Response handle(Request request, @Nullable LeaseAttempt attempt) throws X;
}
