package dev.idempotency.http;

/**
 * A request handler whose writes go into a transaction: the layer runs it at most once per key, and
 * records its response in the same transaction.
 *
 * <p>It must leave the transaction to the layer: never commit, roll back, close it or switch
 * auto-commit on. Every response it returns is recorded, whatever its status (a 402 or a 404 decided
 * here is the operation's result; a 5xx too, replayed to every retry, which {@link RetryingHttpClient}
 * then stops retrying). If it throws, nothing is recorded, the transaction rolls back, and a retry
 * runs it again: throw, rather than return a 5xx, for a failure that a retry may mend.
 *
 * @param <C> the transaction type (a JDBC {@code Connection}, a Jdbi {@code Handle}, ...)
 * <p>The server calls it from many threads at once: it must be thread-safe.
 *
 * @param <X> the checked exception it may throw
 */
@FunctionalInterface
public interface TxHandler<C, X extends Exception> {

    /**
     * @param request the request
     * @param tx the open transaction
     * @return the response; never {@code null}
     * @throws X a failure: nothing is recorded
     */
    Response handle(Request request, C tx) throws X;
}
