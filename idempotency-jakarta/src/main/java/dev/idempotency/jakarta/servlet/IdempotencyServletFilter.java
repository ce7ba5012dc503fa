package dev.idempotency.jakarta.servlet;

import dev.idempotency.LeaseAttempt;
import dev.idempotency.http.HttpAnswer;
import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.http.Request;
import dev.idempotency.http.Response;
import dev.idempotency.http.ServerErrors;
import dev.idempotency.jakarta.servlet.internal.CachedBodyRequest;
import dev.idempotency.jakarta.servlet.internal.Refusals;
import dev.idempotency.jakarta.servlet.internal.ServletExchanges;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The {@code Idempotency-Key} header on any Jakarta Servlet 6 container, without Spring: a
 * {@link Filter} that runs the rest of the chain (the servlets and filters it is mapped before)
 * through {@link HttpIdempotency}, which answers by its table (400, 409 with {@code Retry-After},
 * 422, replays marked {@code Idempotent-Replayed: true}, 503 in lease mode, the recorded 500s; see
 * the HTTP documentation), and records the response the chain wrote.
 *
 * <p><b>Two modes.</b>
 * <ul>
 *   <li>{@link Builder#transactional()}, the default: {@link HttpIdempotency#handle}, in a
 *       transaction of the layer's {@code ManagedIdempotency}. The chain runs inside it and its
 *       response is recorded in it before the commit; it is sent after the commit. With
 *       {@code JtaTransactions} that transaction is a JTA transaction on the request's thread, which
 *       the servlets' own connections of the same managed {@code DataSource} join; with any other
 *       runner the servlet takes the transaction from the request attribute
 *       {@link #TRANSACTION_ATTRIBUTE} ({@link #transaction(ServletRequest, Class)}: a
 *       {@code Connection} for {@code JdbcTransactions}).</li>
 *   <li>{@link Builder#leased()}: {@link HttpIdempotency#handleLeased}, for a chain whose effects
 *       leave the database (a payment provider): the chain runs outside any transaction; the
 *       attempt is the request attribute {@link #ATTEMPT_ATTRIBUTE}, whose {@code downstreamKey()}
 *       goes to the provider.</li>
 * </ul>
 *
 * <p><b>Per request.</b> A safe method (GET, HEAD, OPTIONS, TRACE) passes through untouched,
 * outside any transaction: its key means nothing and nothing is recorded. Any other:
 * <ol>
 *   <li>the scope ({@link ServletScope}, the user principal's by default); none: 401, problem
 *       {@code unauthenticated};</li>
 *   <li>the body is read, up to {@code maxRequestBytes} (1 MiB by default; more: 413, problem
 *       {@code request-too-large}), for the fingerprint; the chain reads it again, form parameters
 *       included;</li>
 *   <li>the layer answers by its table, or runs the chain; the chain's status and headers are set
 *       on the response, its body held back until the transaction has committed;
 *       {@code sendError} and {@code sendRedirect} are held back as well, and recorded like any
 *       response the chain writes;</li>
 *   <li>a chain that throws records nothing: the transaction rolls back with the chain's writes,
 *       the exception reaches the container (which answers 500), and the client's retry with the
 *       same key runs the chain again;</li>
 *   <li>a 5xx the chain writes is recorded and replayed like any status, unless the filter (or its
 *       layer) releases server errors ({@link Builder#serverErrors}): then the transaction rolls back
 *       with the chain's writes (in lease mode, the lease is ended), the 5xx is sent as the chain
 *       wrote it, and the retry runs the chain again.</li>
 * </ol>
 * A transaction the database aborts is not run again inside the request, since a servlet request
 * cannot be dispatched twice: build the layer on a {@code ManagedIdempotency} without retries
 * ({@code RetryPolicy.none()}); the conflict then reaches the container as a 500, and the client
 * retries. A chain that starts asynchronous processing is refused with an
 * {@link IllegalStateException}: its response would be written after the transaction ended.
 *
 * <p>Map it after authentication, to the endpoints that take keys. Immutable and thread-safe once
 * built: one filter serves every request.
 */
public final class IdempotencyServletFilter implements Filter {

    /** The request attribute holding the layer's open transaction in transactional mode. */
    public static final String TRANSACTION_ATTRIBUTE = "dev.idempotency.jakarta.servlet.transaction";
    /** The request attribute holding the {@link LeaseAttempt} in lease mode (absent for an unkeyed request). */
    public static final String ATTEMPT_ATTRIBUTE = "dev.idempotency.jakarta.servlet.attempt";
    /** The largest request body read by default, in bytes: 1 MiB. */
    public static final int DEFAULT_MAX_REQUEST_BYTES = 1 << 20;


    private final HttpIdempotency<?> layer;
    private final ServletScope scope;
    private final int maxRequestBytes;
    private final boolean leased;

    private IdempotencyServletFilter(Builder b) {
        this.layer = b.serverErrors == null ? b.layer : b.layer.withServerErrors(b.serverErrors);
        this.scope = b.scope;
        this.maxRequestBytes = b.maxRequestBytes;
        this.leased = b.leased;
    }

    /**
     * @param layer the HTTP layer, built on a {@code ManagedIdempotency} (preferably without retries)
     * @return a builder: transactional mode, the user principal's scope, 1 MiB bodies
     */
    public static Builder builder(HttpIdempotency<?> layer) {
        return new Builder(layer);
    }

    /**
     * The layer's open transaction, for a servlet in transactional mode.
     *
     * @param request the request
     * @param type the transaction type ({@code Connection.class} for {@code JdbcTransactions} and {@code JtaTransactions})
     * @param <C> the transaction type
     * @return the transaction
     * @throws IllegalStateException if the request is not inside this filter's transaction (a safe
     *     method, a path the filter is not mapped to, lease mode)
     */
    public static <C> C transaction(ServletRequest request, Class<C> type) {
        Object tx = request.getAttribute(TRANSACTION_ATTRIBUTE);
        if (tx == null) {
            throw new IllegalStateException("this request runs outside an IdempotencyServletFilter's transaction (a safe method,"
                    + " a path the filter is not mapped to, or lease mode); map the filter to it, in transactional mode");
        }
        return type.cast(tx);
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
        if (!(req instanceof HttpServletRequest) || !(res instanceof HttpServletResponse)) {
            chain.doFilter(req, res);
            return;
        }
        HttpServletRequest request = (HttpServletRequest) req;
        HttpServletResponse response = (HttpServletResponse) res;
        if (ServletExchanges.isSafe(request)) { // changes nothing: the key means nothing, nothing is recorded
            chain.doFilter(request, response);
            return;
        }
        ServletExchanges.Admitted admitted = ServletExchanges.admit(request, response, scope, maxRequestBytes);
        if (admitted == null) {
            return;
        }
        String client = admitted.scope();
        byte[] body = admitted.body();
        CapturedResponse capture = new CapturedResponse(response);
        CachedBodyRequest replayable = new CachedBodyRequest(request, body);
        Request layerRequest = Request.of(request.getMethod(), ServletExchanges.target(request), ServletExchanges.headers(request), body);
        HttpAnswer answer;
        try {
            answer = leased
                    ? layer.handleLeased(layerRequest, client, (r, attempt) -> {
                        replayable.setAttribute(ATTEMPT_ATTRIBUTE, attempt);
                        try {
                            return dispatch(chain, replayable, capture);
                        } finally {
                            replayable.removeAttribute(ATTEMPT_ATTRIBUTE);
                        }
                    })
                    : handle(layer, layerRequest, client, tx -> {
                        replayable.setAttribute(TRANSACTION_ATTRIBUTE, tx);
                        try {
                            return dispatch(chain, replayable, capture);
                        } finally {
                            replayable.removeAttribute(TRANSACTION_ATTRIBUTE);
                        }
                    });
        } catch (IOException | ServletException | RuntimeException | Error e) {
            if (!response.isCommitted()) {
                response.reset();
            }
            throw e;
        } catch (Exception e) { // no other checked exception leaves a filter chain
            if (!response.isCommitted()) {
                response.reset();
            }
            throw new ServletException(e);
        }
        if (answer.kind() == HttpAnswer.Kind.EXECUTED || answer.kind() == HttpAnswer.Kind.UNKEYED
                || answer.kind() == HttpAnswer.Kind.RELEASED) {
            capture.copyBodyToResponse(); // as the chain wrote it: status and headers are on the response already
            return;
        }
        if (capture.used() && !response.isCommitted()) {
            // the chain ran, but its response is not the answer (a final failure, a response too large, a lease
            // lost): nothing of it may show, not even its headers
            response.reset();
        }
        ServletExchanges.write(response, answer.response());
    }

    /** Runs the rest of the chain into {@code capture}, and returns what it wrote. */
    private static Response dispatch(FilterChain chain, HttpServletRequest request, CapturedResponse capture)
            throws IOException, ServletException {
        chain.doFilter(request, capture.use());
        if (request.isAsyncStarted()) {
            throw new IllegalStateException("the servlet for " + request.getMethod() + " " + request.getRequestURI() + " started"
                    + " asynchronous processing; its response would be written after its transaction ended. Answer"
                    + " synchronously on the paths that IdempotencyServletFilter is mapped to");
        }
        return capture.captured();
    }

    /** The chain, given the open transaction. */
    @FunctionalInterface
    private interface Dispatch {
        Response run(Object tx) throws IOException, ServletException;
    }

    private static <C> HttpAnswer handle(HttpIdempotency<C> layer, Request request, String client, Dispatch dispatch)
            throws IOException, ServletException {
        try {
            return layer.handle(request, client, (r, tx) -> dispatch.run(tx));
        } catch (IOException | ServletException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new ServletException(e);
        }
    }

    @Override
    public String toString() {
        return "IdempotencyServletFilter[" + layer + (leased ? ", leased" : ", transactional") + ", maxRequestBytes="
                + maxRequestBytes + "]";
    }

    /** Builds an {@link IdempotencyServletFilter}. Not thread-safe; the filter it builds is. */
    public static final class Builder {

        private final HttpIdempotency<?> layer;
        private ServletScope scope = ServletScope.userPrincipal();
        private int maxRequestBytes = DEFAULT_MAX_REQUEST_BYTES;
        private boolean leased;
        private @Nullable ServerErrors serverErrors;

        private Builder(HttpIdempotency<?> layer) {
            this.layer = Objects.requireNonNull(layer, "layer");
        }

        /**
         * @param scope the scope of a request's key (default {@link ServletScope#userPrincipal()})
         * @return this builder
         */
        public Builder scope(ServletScope scope) {
            this.scope = Objects.requireNonNull(scope, "scope");
            return this;
        }

        /**
         * @param maxRequestBytes the largest body read, in bytes (default 1 MiB); a larger one is answered 413
         * @return this builder
         * @throws IllegalArgumentException if less than 1
         */
        public Builder maxRequestBytes(int maxRequestBytes) {
            this.maxRequestBytes = Refusals.maxRequestBytes(maxRequestBytes);
            return this;
        }

        /** @return this builder, in transactional mode ({@link HttpIdempotency#handle}; the default) */
        public Builder transactional() {
            this.leased = false;
            return this;
        }

        /** @return this builder, in lease mode ({@link HttpIdempotency#handleLeased}) */
        public Builder leased() {
            this.leased = true;
            return this;
        }

        /**
         * What this filter does with a 5xx the chain writes, in place of its layer's choice
         * ({@link HttpIdempotency#serverErrors()}, {@link ServerErrors#RECORD} unless the layer was
         * built otherwise): {@link ServerErrors#RELEASE} records nothing of the key, rolls the
         * chain's writes back (or ends the lease), sends the 5xx, and lets the retry run the chain
         * again. The records are the layer's either way.
         *
         * @param serverErrors what to do with the chain's 5xx
         * @return this builder
         */
        public Builder serverErrors(ServerErrors serverErrors) {
            this.serverErrors = Objects.requireNonNull(serverErrors, "serverErrors");
            return this;
        }

        /** @return the filter */
        public IdempotencyServletFilter build() {
            return new IdempotencyServletFilter(this);
        }
    }
}
