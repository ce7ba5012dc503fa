package dev.idempotency.http;

import dev.idempotency.ResultCodec;
import dev.idempotency.http.internal.HeaderMaps;
import dev.idempotency.http.internal.ResponseCodec;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * An HTTP response: a status, headers and the body's bytes. A handler returns one; the layer records
 * it (status, body and the headers chosen for replay, through {@link #codec()}) and a retry gets it
 * back.
 *
 * <pre>{@code
 * return Response.of(201)
 *         .withHeader("Location", "/payments/" + id)
 *         .withBody("application/json", "{\"id\":\"" + id + "\"}");
 * }</pre>
 *
 * <p>Immutable and thread-safe: every {@code with} method returns a new response, the body is copied
 * in and out, and header look-ups ignore case. Equal responses have the same status, headers (names
 * compared without case, values in order) and body bytes.
 */
public final class Response {

    private final int status;
    private final Map<String, List<String>> headers;
    private final byte[] body;

    private Response(int status, Map<String, List<String>> headers, byte[] body) {
        this.status = status;
        this.headers = headers;
        this.body = body;
    }

    /**
     * @param status the status code, 200 to 599
     * @return a response with that status, no headers and an empty body
     * @throws IllegalArgumentException if the status is out of range
     */
    public static Response of(int status) {
        return new Response(checkStatus(status), Map.of(), new byte[0]);
    }

    /**
     * @param status the status code, 200 to 599
     * @param headers the headers, names in any case
     * @param body the body's bytes
     * @return the response
     * @throws IllegalArgumentException if the status is out of range or a header is malformed
     */
    public static Response of(int status, Map<String, ? extends List<String>> headers, byte[] body) {
        return new Response(checkStatus(status), HeaderMaps.copyOf(headers), Objects.requireNonNull(body, "body").clone());
    }

    private static int checkStatus(int status) {
        if (status < 200 || status > 599) {
            throw new IllegalArgumentException("status must be between 200 and 599, was " + status);
        }
        return status;
    }

    /**
     * @param name a header name
     * @param value a value, added after the values the header already has
     * @return a copy of this response with the value added
     * @throws IllegalArgumentException if the name or value is malformed (CR, LF, NUL, ...)
     */
    public Response withHeader(String name, String value) {
        HeaderMaps.checkName(name);
        HeaderMaps.checkValue(name, value);
        Map<String, List<String>> copy = new LinkedHashMap<>();
        headers.forEach((n, v) -> copy.put(n, new ArrayList<>(v)));
        String existing = headers.keySet().stream().filter(n -> n.equalsIgnoreCase(name)).findFirst().orElse(name);
        copy.computeIfAbsent(existing, n -> new ArrayList<>()).add(value);
        return new Response(status, HeaderMaps.copyOf(copy), body);
    }

    /**
     * @param body the body's bytes
     * @return a copy of this response with that body
     */
    public Response withBody(byte[] body) {
        return new Response(status, headers, Objects.requireNonNull(body, "body").clone());
    }

    /**
     * @param contentType the {@code Content-Type}, such as {@code application/json}; {@code ;charset=utf-8}
     *     is not added
     * @param text the body, sent as UTF-8
     * @return a copy of this response with that body and content type (replacing any content type)
     */
    public Response withBody(String contentType, String text) {
        Objects.requireNonNull(text, "text");
        Map<String, List<String>> copy = new LinkedHashMap<>(headers);
        copy.keySet().removeIf(n -> n.equalsIgnoreCase("Content-Type"));
        copy.put("Content-Type", List.of(HeaderMaps.checkValue("Content-Type", contentType)));
        return new Response(status, HeaderMaps.copyOf(copy), text.getBytes(StandardCharsets.UTF_8));
    }

    /** @return the status code */
    public int status() {
        return status;
    }

    /** @return the headers: unmodifiable, look-ups ignore case */
    public Map<String, List<String>> headers() {
        return headers;
    }

    /**
     * @param name a header name, in any case
     * @return its first value, if the response has it
     */
    public Optional<String> header(String name) {
        return headers.getOrDefault(Objects.requireNonNull(name, "name"), List.of()).stream().findFirst();
    }

    /** @return a copy of the body's bytes */
    public byte[] body() {
        return body.clone();
    }

    /** @return the body decoded as UTF-8 */
    public String bodyText() {
        return new String(body, StandardCharsets.UTF_8);
    }

    /**
     * The codec that records responses: status, headers and body in a length-prefixed binary form of
     * its own (named {@code http-response-v1}); no Java serialization, no JSON library. Use it for a
     * response recorded by phases of your own ({@code Phases...finish(..., Response.codec())}).
     *
     * @return the codec; thread-safe
     */
    public static ResultCodec<Response> codec() {
        return ResponseCodec.INSTANCE;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Response other && status == other.status && headers.equals(other.headers) && Arrays.equals(body, other.body);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * status + headers.hashCode()) + Arrays.hashCode(body);
    }

    @Override
    public String toString() {
        return "Response[" + status + ", headers=" + headers.keySet() + ", " + body.length + " body bytes]";
    }
}
