package dev.idempotency.http;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpPrincipal;
import dev.idempotency.http.internal.Problems;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link HttpIdempotency} on the JDK's own HTTP server ({@code com.sun.net.httpserver}): an
 * {@link HttpHandler} that reads the request, asks the layer, and writes its answer.
 *
 * <pre>{@code
 * HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 8080), 0);
 * HttpContext payments = server.createContext("/payments", JdkHttpHandler.builder(layer, JdkHttpHandler.authenticatedUser())
 *         .transactional((request, connection) -> createPayment(request, connection)));
 * payments.setAuthenticator(new BasicAuthenticator("payments") { ... });
 * }</pre>
 *
 * <p>The scope of each request comes from a function of the exchange, such as the authenticated
 * user ({@link #authenticatedUser()}); a request without one is answered 401. A body over the limit
 * ({@link Builder#maxRequestBytes}) is answered 413 with {@code Connection: close}, and a request
 * with a header that no {@link Request} may hold (a NUL in a value) 400, without running anything;
 * what is left of a request body after the answer is read and discarded, up to 64 MiB, before the
 * connection closes, so that the client gets the answer whole instead of a reset. A handler that throws
 * is answered 500 (a problem without the exception's details, which are logged); nothing was
 * recorded, and a retry runs it again.
 *
 * <p>Thread-safe: the server may call it from many threads.
 */
public final class JdkHttpHandler implements HttpHandler {

    /** The largest request body read by default: 1 MiB. */
    public static final int DEFAULT_MAX_REQUEST_BYTES = 1024 * 1024;

    /** The most of a refused request body read and discarded after the answer, so that the client gets it whole. */
    private static final long MAX_DRAINED_BYTES = 64L * 1024 * 1024;

    private static final Logger log = LoggerFactory.getLogger(JdkHttpHandler.class);

    /**
     * Called with each answer of the layer, after the handler's transaction committed and before the
     * answer is written: for metrics or logs. An exception thrown here closes the connection without
     * an answer (the client sees a lost response; what was recorded stays recorded).
     */
    @FunctionalInterface
    public interface AnswerListener {
        /**
         * @param exchange the exchange
         * @param answer the layer's answer
         * @throws IOException to close the connection without answering
         */
        void onAnswer(HttpExchange exchange, HttpAnswer answer) throws IOException;
    }

    /** Asks the layer for an answer; one of its three modes. */
    @FunctionalInterface
    private interface Mode {
        HttpAnswer answer(Request request, String scope) throws Exception;
    }

    private final Function<HttpExchange, @Nullable String> scope;
    private final int maxRequestBytes;
    private final AnswerListener listener;
    private final Mode mode;

    private JdkHttpHandler(Builder<?> b, Mode mode) {
        this.scope = b.scope;
        this.maxRequestBytes = b.maxRequestBytes;
        this.listener = b.listener;
        this.mode = mode;
    }

    /**
     * @param layer the idempotency layer
     * @param scope the scope of an exchange (the authenticated client, a tenant), or {@code null} to
     *     answer 401
     * @param <C> the layer's transaction type
     * @return a builder
     */
    public static <C> Builder<C> builder(HttpIdempotency<C> layer, Function<HttpExchange, @Nullable String> scope) {
        return new Builder<>(layer, scope);
    }

    /**
     * @return the scope function that takes the name of the user authenticated by the context's
     *     {@code Authenticator} (such as a {@code BasicAuthenticator}), or {@code null} if none; a
     *     name that is not a valid scope (a space, a non-ASCII letter, over 64 characters) is mapped
     *     to a stable digest of it ({@link HttpIdempotency#principalScope})
     */
    public static Function<HttpExchange, @Nullable String> authenticatedUser() {
        return exchange -> {
            HttpPrincipal principal = exchange.getPrincipal();
            return principal == null ? null : HttpIdempotency.principalScope(principal.getUsername());
        };
    }

    @Override
    public void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            HttpAnswer answer = answer(exchange);
            if (answer != null) {
                listener.onAnswer(exchange, answer);
            }
            write(exchange, answer == null ? failure() : answer.response());
        }
    }

    /** @return the answer, or {@code null} after a failure of the handler or the store */
    private @Nullable HttpAnswer answer(HttpExchange exchange) throws IOException {
        String client = scope.apply(exchange);
        if (client == null) {
            return new HttpAnswer(Problems.of(401, HttpIdempotency.PROBLEM_TYPES + "unauthenticated", "Unauthenticated",
                    "This endpoint needs an authenticated client: its keys are kept apart from every other client's.", null),
                    HttpAnswer.Kind.KEY_REFUSED);
        }
        byte[] body = exchange.getRequestBody().readNBytes(maxRequestBytes + 1); // left open: see write
        if (body.length > maxRequestBytes) {
            return new HttpAnswer(Problems.of(413, HttpIdempotency.PROBLEM_TYPES + "request-too-large", "Request too large",
                    "The request body is over " + maxRequestBytes + " bytes.", null).withHeader("Connection", "close"),
                    HttpAnswer.Kind.KEY_REFUSED);
        }
        URI uri = exchange.getRequestURI();
        String target = uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
        Request request;
        try {
            request = Request.of(exchange.getRequestMethod(), target, exchange.getRequestHeaders(), body);
        } catch (IllegalArgumentException malformed) { // a header the JDK's server let through: NUL in a value, say
            return new HttpAnswer(Problems.of(400, HttpIdempotency.PROBLEM_TYPES + "request-malformed", "Request malformed",
                    "The request cannot be read: " + malformed.getMessage() + ". Nothing ran.", null), HttpAnswer.Kind.KEY_REFUSED);
        }
        try {
            return mode.answer(request, client);
        } catch (Exception e) {
            log.warn("{} {}: the handler failed; answering 500, nothing recorded", request.method(), request.target(), e);
            return null;
        }
    }

    private static Response failure() {
        return Problems.of(500, HttpIdempotency.PROBLEM_TYPES + "internal-error", "Internal error",
                "The request failed and nothing was recorded: retry it with the same key.", null);
    }

    /**
     * Writes the response, then reads what is left of the request body (a body over the limit, or
     * one not read before a 401) before the exchange ends: the JDK's server closes a connection with
     * unread request bytes, the socket closed so sends a reset, and the reset can destroy the
     * response before the client has read it. The response is flushed first, so that a client that
     * stops sending when it sees it (curl) stops early.
     */
    private static void write(HttpExchange exchange, Response response) throws IOException {
        Headers headers = exchange.getResponseHeaders();
        response.headers().forEach((name, values) -> values.forEach(value -> headers.add(name, value)));
        byte[] body = response.body();
        boolean bodiless = exchange.getRequestMethod().equalsIgnoreCase("HEAD") || response.status() == 204 || response.status() == 304;
        if (bodiless || body.length == 0) {
            drain(exchange.getRequestBody()); // without a body the server ends the exchange with the headers
            exchange.sendResponseHeaders(response.status(), -1);
            return;
        }
        exchange.sendResponseHeaders(response.status(), body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
            out.flush();
            drain(exchange.getRequestBody());
        }
    }

    /** Reads and discards the rest of a request body, up to {@link #MAX_DRAINED_BYTES}; stops if the client went. */
    private static void drain(InputStream in) {
        byte[] buffer = new byte[8192];
        try {
            for (long left = MAX_DRAINED_BYTES; left > 0; ) {
                int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
                if (n < 0) {
                    return;
                }
                left -= n;
            }
        } catch (IOException gone) {
            log.debug("The client closed the connection before sending all of the request body", gone);
        }
    }

    @Override
    public String toString() {
        return "JdkHttpHandler[maxRequestBytes=" + maxRequestBytes + "]";
    }

    /**
     * Builds a {@link JdkHttpHandler}. Not thread-safe; what it builds is.
     *
     * @param <C> the layer's transaction type
     */
    public static final class Builder<C> {
        private final HttpIdempotency<C> layer;
        private final Function<HttpExchange, @Nullable String> scope;
        private int maxRequestBytes = DEFAULT_MAX_REQUEST_BYTES;
        private AnswerListener listener = (exchange, answer) -> { };

        private Builder(HttpIdempotency<C> layer, Function<HttpExchange, @Nullable String> scope) {
            this.layer = Objects.requireNonNull(layer, "layer");
            this.scope = Objects.requireNonNull(scope, "scope");
        }

        /**
         * @param maxRequestBytes the largest request body read; a larger one is answered 413 and the
         *     connection closed, after up to 64 MiB more are read and discarded (1 to 256 MiB)
         * @return this builder
         * @throws IllegalArgumentException if out of range
         */
        public Builder<C> maxRequestBytes(int maxRequestBytes) {
            if (maxRequestBytes < 1 || maxRequestBytes > 256 * 1024 * 1024) {
                throw new IllegalArgumentException("maxRequestBytes must be between 1 and 268435456, was " + maxRequestBytes);
            }
            this.maxRequestBytes = maxRequestBytes;
            return this;
        }

        /**
         * @param listener hears each answer before it is written
         * @return this builder
         */
        public Builder<C> listener(AnswerListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * @param handler the handler, run in a transaction the library begins and commits ({@link HttpIdempotency#handle})
         * @return the HTTP handler
         */
        public JdkHttpHandler transactional(TxHandler<C, ?> handler) {
            Objects.requireNonNull(handler, "handler");
            return new JdkHttpHandler(this, (request, client) -> layer.handle(request, client, handler));
        }

        /**
         * @param handler the handler, run in lease mode ({@link HttpIdempotency#handleLeased})
         * @return the HTTP handler
         */
        public JdkHttpHandler leased(LeasedHandler<?> handler) {
            Objects.requireNonNull(handler, "handler");
            return new JdkHttpHandler(this, (request, client) -> layer.handleLeased(request, client, handler));
        }
    }
}
