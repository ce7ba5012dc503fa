package dev.idempotency.jakarta.servlet.internal;

import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.http.Response;
import dev.idempotency.http.internal.Problems;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What the filters of this project (the servlet ones and the Jakarta REST ones) refuse alike before
 * the HTTP layer sees a request, without naming a servlet type: Jakarta REST runs without the
 * Servlet API too. Stateless and thread-safe.
 */
public final class Refusals {

    /** The methods that change nothing: their requests pass through, the key means nothing for them. */
    private static final Set<String> SAFE_METHODS = Set.of("GET", "HEAD", "OPTIONS", "TRACE");

    private Refusals() {
    }

    /** @param method a request's method @return whether it changes nothing, so that its requests pass through */
    public static boolean isSafe(String method) {
        return SAFE_METHODS.contains(method);
    }

    /** @return the 401 answer, problem {@code unauthenticated}, to a request without an authenticated client */
    public static Response unauthenticated() {
        return Problems.of(401, HttpIdempotency.PROBLEM_TYPES + "unauthenticated", "Unauthenticated",
                "This endpoint takes idempotency keys per authenticated client; the request has none.", null);
    }

    /**
     * @param maxRequestBytes the limit the request's body is over
     * @param key the request's key header, or {@code null}
     * @return the 413 answer, problem {@code request-too-large}
     */
    public static Response requestTooLarge(int maxRequestBytes, @Nullable String key) {
        return Problems.of(413, HttpIdempotency.PROBLEM_TYPES + "request-too-large", "Request too large",
                "The request body is larger than " + maxRequestBytes + " bytes.", key);
    }

    /**
     * @param maxRequestBytes a filter's largest body read, in bytes
     * @return it, checked
     * @throws IllegalArgumentException if less than 1
     */
    public static int maxRequestBytes(int maxRequestBytes) {
        if (maxRequestBytes < 1) {
            throw new IllegalArgumentException("maxRequestBytes must be at least 1, was " + maxRequestBytes);
        }
        return maxRequestBytes;
    }
}
