package dev.idempotency.jakarta.servlet.internal;

import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.http.Response;
import dev.idempotency.http.internal.Problems;
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

    /** @return the 401 answer, problem {@code unauthenticated}, to a request without an authenticated client */
    public static Response unauthenticated() {
        return Problems.of(401, HttpIdempotency.PROBLEM_TYPES + "unauthenticated", "Unauthenticated",
                "This endpoint takes idempotency keys per authenticated client; the request has none.", null);
    }

    /**
     * @param request the request
     * @param maxRequestBytes the limit its body is over
     * @return the 413 answer, problem {@code request-too-large}
     */
    public static Response requestTooLarge(HttpServletRequest request, int maxRequestBytes) {
        return Problems.of(413, HttpIdempotency.PROBLEM_TYPES + "request-too-large", "Request too large",
                "The request body is larger than " + maxRequestBytes + " bytes.", request.getHeader(HttpIdempotency.DEFAULT_KEY_HEADER));
    }

    /**
     * @param request the request
     * @param maxRequestBytes the largest body read
     * @return the body, or {@code null} if it is over the limit
     * @throws IOException if reading fails
     */
    public static byte @Nullable [] readBody(HttpServletRequest request, int maxRequestBytes) throws IOException {
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
