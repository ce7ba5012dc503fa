package dev.idempotency.http;

/**
 * What the HTTP layer does with a 5xx response that a keyed request's handler returns
 * ({@link HttpIdempotency.Builder#serverErrors}). A handler that throws is never recorded, whatever
 * this says; the layer's own 5xx answers ({@code scope-invalid}, {@code response-too-large},
 * {@code store-unavailable}, a recorded final failure) are not concerned either.
 */
public enum ServerErrors {
    /**
     * The default: the 5xx is the key's answer like any other status, recorded with the handler's
     * writes and replayed to every retry. A recorded 5xx is final for that key: the client needs a
     * new key to try the operation again (Stripe's v1 API does so).
     */
    RECORD,
    /**
     * Nothing of the key stays recorded and the 5xx is sent as the handler wrote it; the next retry
     * with the same key runs the handler again (Stripe's v2 API does so). In a transaction the library runs
     * ({@link HttpIdempotency#handle}) the whole transaction is rolled back, the handler's writes with
     * the key's claim; in the server's own ({@link HttpIdempotency#handleIn}) the claim is released and
     * the answer says {@link HttpAnswer#rollbackRequired()}; in lease mode
     * ({@link HttpIdempotency#handleLeased}) the lease is ended, so that the retry takes the key over
     * at once, and what the handler did outside the database stands.
     */
    RELEASE
}
