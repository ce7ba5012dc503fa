package dev.idempotency.jakarta.servlet.internal;

import dev.idempotency.http.Request;

/**
 * What the filters of this project (the servlet ones and the Jakarta REST ones) check alike before
 * the HTTP layer sees a request, without naming a servlet type: Jakarta REST runs without the
 * Servlet API too. Their 401 and 413 answers are the HTTP layer's ({@code Problems}). Stateless and thread-safe.
 */
public final class Refusals {

    private Refusals() {
    }

    /** @param method a request's method @return whether it changes nothing, so that its requests pass through */
    public static boolean isSafe(String method) {
        return Request.isSafe(method);
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
