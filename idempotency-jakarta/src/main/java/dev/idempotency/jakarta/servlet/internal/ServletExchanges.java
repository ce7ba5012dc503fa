package dev.idempotency.jakarta.servlet.internal;

import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.http.Response;
import dev.idempotency.http.internal.Problems;
import dev.idempotency.jakarta.servlet.ServletScope;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What the servlet filters of this project (the plain one and Spring MVC's) do alike with a servlet
 * request and response: read the body within a limit, the target and headers for the HTTP layer,
 * write an answer. Stateless and thread-safe.
 */
public final class ServletExchanges {

    private ServletExchanges() {
    }

    /**
     * A request the filter takes to the HTTP layer: its scope and its whole body.
     *
     * @param scope the scope of the request's key
     * @param body the request's body, within the limit
     */
    public record Admitted(String scope, byte[] body) {
    }

    /** @param request the request @return whether its method changes nothing, so that it passes through */
    public static boolean isSafe(HttpServletRequest request) {
        return Refusals.isSafe(request.getMethod());
    }



    /**
     * What every filter does before the HTTP layer sees an unsafe request: it answers 401 to a
     * request without an authenticated client, and 413 to a body over the limit (closing the
     * connection: the rest of the body is not read).
     *
     * @param request the request, not safe
     * @param response where a refusal is written
     * @param scope the scope of the request's key
     * @param maxRequestBytes the largest body read
     * @return the scope and body, or {@code null} if the request has been answered here
     * @throws IOException if reading or writing fails
     */
    public static @Nullable Admitted admit(HttpServletRequest request, HttpServletResponse response, ServletScope scope,
            int maxRequestBytes) throws IOException {
        String client = scope.scopeOf(request);
        if (client == null) {
            write(response, Problems.unauthenticated());
            return null;
        }
        byte[] body = readBody(request, maxRequestBytes);
        if (body == null) {
            response.setHeader("Connection", "close");
            write(response, Problems.requestTooLarge(maxRequestBytes, request.getHeader(HttpIdempotency.DEFAULT_KEY_HEADER)));
            return null;
        }
        return new Admitted(client, body);
    }

    /**
     * @param request the request
     * @param maxRequestBytes the largest body read
     * @return the body, or {@code null} if it is over the limit
     * @throws IOException if reading fails
     */
    private static byte @Nullable [] readBody(HttpServletRequest request, int maxRequestBytes) throws IOException {
        if (request.getContentLengthLong() > maxRequestBytes) {
            return null;
        }
        try (InputStream in = request.getInputStream()) {
            byte[] body = in.readNBytes(maxRequestBytes + 1);
            return body.length > maxRequestBytes ? null : body;
        }
    }

    /** @param request the request @return its path and query, as the HTTP layer fingerprints them */
    public static String target(HttpServletRequest request) {
        String query = request.getQueryString();
        return query == null ? request.getRequestURI() : request.getRequestURI() + "?" + query;
    }

    /** @param request the request @return its headers, each with its values in order */
    public static Map<String, List<String>> headers(HttpServletRequest request) {
        Map<String, List<String>> headers = new LinkedHashMap<>();
        for (String name : Collections.list(request.getHeaderNames())) {
            headers.put(name, Collections.list(request.getHeaders(name)));
        }
        return headers;
    }

    /**
     * Writes an answer the handler did not write: a replay or the layer's own. Headers that earlier
     * filters set (CORS, security) stay; the answer's own replace any of the same name.
     *
     * @param response the response, not committed
     * @param answer what to write
     * @throws IOException if writing fails
     */
    public static void write(HttpServletResponse response, Response answer) throws IOException {
        response.setStatus(answer.status());
        answer.headers().forEach((name, values) -> {
            response.setHeader(name, values.get(0));
            values.subList(1, values.size()).forEach(value -> response.addHeader(name, value));
        });
        byte[] body = answer.body();
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
        response.flushBuffer();
    }
}
