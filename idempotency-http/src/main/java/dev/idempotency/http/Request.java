package dev.idempotency.http;

import dev.idempotency.http.internal.HeaderMaps;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * An HTTP request as the idempotency layer sees it, whatever server received it: the method, the
 * target, the headers and the body's bytes.
 *
 * <p>Immutable and thread-safe: the body is copied in and out, and header look-ups ignore case.
 */
public final class Request {

    private final String method;
    private final String target;
    private final Map<String, List<String>> headers;
    private final byte[] body;

    private Request(String method, String target, Map<String, List<String>> headers, byte[] body) {
        this.method = method;
        this.target = target;
        this.headers = headers;
        this.body = body;
    }

    /**
     * @param method the method, such as {@code POST} (upper case is used from here on)
     * @param target the path, with the query string if there is one ({@code /payments?expand=x})
     * @param headers the request's headers, names in any case
     * @param body the body's bytes (empty for none)
     * @return the request
     * @throws NullPointerException if an argument, a header name or a value is null
     * @throws IllegalArgumentException if the method or target is empty, or a header is malformed
     */
    public static Request of(String method, String target, Map<String, ? extends List<String>> headers, byte[] body) {
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(body, "body");
        if (method.isBlank()) {
            throw new IllegalArgumentException("method must not be blank");
        }
        if (target.isEmpty()) {
            throw new IllegalArgumentException("target must not be empty");
        }
        return new Request(method.toUpperCase(Locale.ROOT), target, HeaderMaps.copyOf(headers), body.clone());
    }

    /** @return the method, in upper case */
    public String method() {
        return method;
    }

    /** @return the path, with the query string if there is one */
    public String target() {
        return target;
    }

    /** @return the headers: unmodifiable, look-ups ignore case */
    public Map<String, List<String>> headers() {
        return headers;
    }

    /**
     * @param name a header name, in any case
     * @return its first value, if the request has it
     */
    public Optional<String> header(String name) {
        return headerValues(name).stream().findFirst();
    }

    /**
     * @param name a header name, in any case
     * @return its values in order; empty if the request has none
     */
    public List<String> headerValues(String name) {
        return headers.getOrDefault(Objects.requireNonNull(name, "name"), List.of());
    }

    /** @return a copy of the body's bytes */
    public byte[] body() {
        return body.clone();
    }

    /** @return the body's length in bytes */
    public int bodyLength() {
        return body.length;
    }

    /** @return whether the method is safe (GET, HEAD, OPTIONS, TRACE): it changes nothing, so a key means nothing */
    public boolean isSafe() {
        return isSafe(method);
    }

    /**
     * The one rule every adapter applies before reading a request: a safe method passes through.
     *
     * @param method a request's method, as sent
     * @return whether it is safe (GET, HEAD, OPTIONS, TRACE): it changes nothing, so a key means nothing
     */
    public static boolean isSafe(String method) {
        return method.equals("GET") || method.equals("HEAD") || method.equals("OPTIONS") || method.equals("TRACE");
    }

    @Override
    public String toString() {
        return "Request[" + method + " " + target + ", " + body.length + " body bytes]";
    }
}
