package dev.idempotency.http;

import java.util.Objects;

/**
 * What the layer answers to one request, and why. Immutable and thread-safe.
 *
 * @param response the response to send
 * @param kind how the layer came to it
 */
public record HttpAnswer(Response response, Kind kind) {

    /** How the layer came to a response. */
    public enum Kind {
        /** The handler ran now; its response was recorded with its writes. */
        EXECUTED,
        /** The first response for the key, replayed with {@code Idempotent-Replayed: true}; the handler did not run. */
        REPLAYED,
        /** 409 with {@code Retry-After}: another attempt holds the key. Nothing recorded. */
        IN_PROGRESS,
        /** 422: the key was used for a different request. Nothing recorded. */
        MISMATCH,
        /**
         * Refused before anything ran, nothing recorded: 400, the key is missing where the endpoint
         * requires one, or malformed; 500, the server's scope for the client is not a valid scope.
         */
        KEY_REFUSED,
        /**
         * A failure that the key policy declares final, recorded and replayed (500 by default); or the
         * handler's response over the result size limit, answered 500 {@code response-too-large}.
         */
        FAILED,
        /**
         * The handler's 5xx response, sent but not recorded ({@link ServerErrors#RELEASE}): the key was
         * released, the handler's writes rolled back (see {@link #rollbackRequired()}), and the next
         * retry with the key runs the handler again.
         */
        RELEASED,
        /** The handler ran without a key (a safe method, or no key where none is required); nothing recorded. */
        UNKEYED,
        /**
         * 503 with {@code Retry-After}: lease mode found the store unreachable and refused the call
         * ({@link dev.idempotency.StoreUnavailableException}); the handler did not run. Nothing recorded.
         */
        STORE_UNAVAILABLE
    }

    /**
     * @param response the response to send
     * @param kind how the layer came to it
     */
    public HttpAnswer {
        Objects.requireNonNull(response, "response");
        Objects.requireNonNull(kind, "kind");
    }

    /**
     * @return whether a transaction the server handed to the layer must be rolled back rather than
     *     committed: after {@link Kind#IN_PROGRESS}, the database may have aborted it while it waited
     *     for the key (PostgreSQL does); after {@link Kind#RELEASED}, the key's claim was released and
     *     the handler's writes must not commit without it. Every other answer leaves it usable.
     */
    public boolean rollbackRequired() {
        return kind == Kind.IN_PROGRESS || kind == Kind.RELEASED;
    }
}
