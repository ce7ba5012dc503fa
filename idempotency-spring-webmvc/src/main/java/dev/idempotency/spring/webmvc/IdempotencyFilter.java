package dev.idempotency.spring.webmvc;

import dev.idempotency.http.HttpAnswer;
import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.http.Request;
import dev.idempotency.http.Response;
import dev.idempotency.jakarta.servlet.internal.CachedBodyRequest;
import dev.idempotency.jakarta.servlet.internal.ServletExchanges;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.HandlerExecutionChain;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.util.ContentCachingResponseWrapper;

/**
 * Applies {@link IdempotentEndpoint}: a servlet filter that, for a request whose handler method carries the
 * annotation, runs the rest of the chain (Spring MVC's {@code DispatcherServlet}, the controller,
 * its message converters) through {@link HttpIdempotency#handle}, in a transaction of the layer's
 * {@code ManagedIdempotency} (Boot's is {@code SpringTransactions} on the application's transaction
 * manager, which {@code JdbcTemplate} and {@code @Transactional} code join), and records the response
 * in that same transaction.
 *
 * <p><b>Why a filter.</b> What a client must get back on a retry is the response as it was written:
 * the status, the headers and the body's bytes after the message converters ran. A
 * {@code HandlerInterceptor} sees the response only after it is written and committed, and an
 * around-advice or return-value handler sees the method's return value before it is converted, so a
 * replay would be converted again (and could differ). A filter around the {@code DispatcherServlet}
 * holds the body back in a {@link ContentCachingResponseWrapper} until the transaction has committed,
 * records exactly those bytes, and decides what reaches the client. It applies only to requests whose
 * handler is annotated: it asks Spring MVC's handler mappings, as the {@code DispatcherServlet} will,
 * with the lookup's request attributes kept apart from the request.
 *
 * <p><b>Per request.</b> A safe method (GET, HEAD, OPTIONS, TRACE) passes through untouched: its
 * key means nothing and nothing is recorded. Any other:
 * <ol>
 *   <li>The scope ({@link IdempotencyScope}); none: 401, problem {@code unauthenticated}.</li>
 *   <li>The body is read, up to {@code maxRequestBytes} (1 MiB by default; more: 413, problem
 *       {@code request-too-large}), for the fingerprint; the controller reads it again, form
 *       parameters included.</li>
 *   <li>The layer answers by its table: 400, 409 with {@code Retry-After}, 422 and replays are
 *       written by this filter, and the controller does not run. Otherwise the controller runs in the
 *       transaction and its response is recorded before the commit, and sent after it.</li>
 *   <li>A handler that throws records nothing: the transaction rolls back. An exception that Spring
 *       MVC resolved into an error response ({@code @ExceptionHandler}, {@code ResponseStatusException})
 *       rolls back as well, and that error response is sent, not recorded; an exception left
 *       unresolved reaches the container. The client's retry with the same key runs the handler
 *       again. A 5xx the handler answers is recorded like any status, unless its annotation or the
 *       layer releases server errors ({@link IdempotentEndpoint#serverErrors()}): then the
 *       transaction rolls back with the handler's writes, the 5xx is sent, and the retry runs the
 *       handler again. The engine and its listeners (the metrics' {@code error} tag) see the handler's own
 *       exception: the resolved one, or the unresolved one out of the {@code ServletException} Spring
 *       MVC wraps it in, which is what the container gets.</li>
 * </ol>
 * A transaction that the database aborts (a deadlock, a serialization failure) is not run again
 * inside the request, since a servlet request cannot be dispatched twice: build the layer on a
 * {@code ManagedIdempotency} without retries ({@code RetryPolicy.none()}, as the auto-configuration
 * does), and the conflict reaches the container as a 500, after which the client retries. Handlers
 * that go asynchronous ({@code Callable}, {@code DeferredResult}) are refused with an
 * {@link IllegalStateException}: their response is written after the transaction would have ended.
 *
 * <p>Order it after authentication (Spring Security's filter chain is at -100; the default here is
 * {@value #DEFAULT_ORDER}). Thread-safe once built: one filter serves every request.
 */
public class IdempotencyFilter extends OncePerRequestFilter implements Ordered {

    /** The default filter order: 0, after Spring Security's filter chain (-100). */
    public static final int DEFAULT_ORDER = 0;
    /** The largest request body read by default, in bytes: 1 MiB. */
    public static final int DEFAULT_MAX_REQUEST_BYTES = 1 << 20;


    private static final Logger log = LoggerFactory.getLogger(IdempotencyFilter.class);

    private final HttpIdempotency<?> layer;
    /** The layer with each choice for a handler's 5xx, for the handlers whose annotation decides. */
    private final IdempotencyScope scope;
    private final Supplier<? extends List<? extends HandlerMapping>> mappings;
    private final int maxRequestBytes;
    private final int order;

    /**
     * @param layer the HTTP layer; built on a {@code ManagedIdempotency}, preferably without retries
     * @param scope the scope of a request's key
     * @param mappings the handler mappings to find a request's handler in, in the
     *     {@code DispatcherServlet}'s order; read at each request (so that they may be created after the filter)
     * @param maxRequestBytes the largest body read, in bytes (at least 1)
     * @param order this filter's order among the servlet filters
     * @throws IllegalArgumentException if {@code maxRequestBytes} is less than 1
     */
    public IdempotencyFilter(HttpIdempotency<?> layer, IdempotencyScope scope,
            Supplier<? extends List<? extends HandlerMapping>> mappings, int maxRequestBytes, int order) {
        this.layer = Objects.requireNonNull(layer, "layer");
        this.scope = Objects.requireNonNull(scope, "scope");
        this.mappings = Objects.requireNonNull(mappings, "mappings");
        if (maxRequestBytes < 1) {
            throw new IllegalArgumentException("maxRequestBytes must be at least 1, was " + maxRequestBytes);
        }
        this.maxRequestBytes = maxRequestBytes;
        this.order = order;
    }

    @Override
    public int getOrder() {
        return order;
    }

    /** Leaves out every request whose handler is not annotated {@link IdempotentEndpoint}. */
    @Override
    protected boolean shouldNotFilter(HttpServletRequest request) {
        return !isIdempotent(request);
    }

    private boolean isIdempotent(HttpServletRequest request) {
        return endpoint(request) != null;
    }

    /** @return the annotation of the request's handler method (else of its controller), or {@code null} if neither has one */
    private @Nullable IdempotentEndpoint endpoint(HttpServletRequest request) {
        HttpServletRequest lookup = new AttributeOverlayRequest(request);
        for (HandlerMapping mapping : mappings.get()) {
            HandlerExecutionChain chain;
            try {
                chain = mapping.getHandler(lookup);
            } catch (Exception e) { // no match for the method or media type: the DispatcherServlet answers it
                log.trace("No handler for {} {}: {}", request.getMethod(), request.getRequestURI(), e.toString());
                return null;
            }
            if (chain != null) {
                if (!(chain.getHandler() instanceof HandlerMethod method)) {
                    return null;
                }
                IdempotentEndpoint own = method.getMethodAnnotation(IdempotentEndpoint.class);
                return own != null ? own : AnnotatedElementUtils.findMergedAnnotation(method.getBeanType(), IdempotentEndpoint.class);
            }
        }
        return null;
    }

    /** The layer for the request's handler: the annotation's choice for a 5xx, else the layer's own. */
    private HttpIdempotency<?> layerFor(HttpServletRequest request) {
        IdempotentEndpoint endpoint = endpoint(request);
        return endpoint == null ? layer : layer.forHandler(endpoint.serverErrors(), "@IdempotentEndpoint",
                "the handler of " + request.getMethod() + " " + request.getRequestURI());
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        if (ServletExchanges.isSafe(request)) { // changes nothing: the key means nothing, nothing is recorded
            chain.doFilter(request, response);
            return;
        }
        HttpIdempotency<?> chosen = layerFor(request);
        ServletExchanges.Admitted admitted = ServletExchanges.admit(request, response, scope, maxRequestBytes);
        if (admitted == null) {
            return;
        }
        String client = admitted.scope();
        byte[] body = admitted.body();
        ContentCachingResponseWrapper capture = new ContentCachingResponseWrapper(response);
        ServletException[] wrapper = new ServletException[1]; // Spring MVC's wrapper of the handler's exception, if it made one
        HttpAnswer answer;
        try {
            answer = handle(chosen, Request.of(request.getMethod(), ServletExchanges.target(request), ServletExchanges.headers(request), body), client, () -> {
                try {
                    chain.doFilter(new CachedBodyRequest(request, body), capture);
                } catch (ServletException e) {
                    wrapper[0] = e;
                    throw handlersOwn(e);
                }
                if (request.isAsyncStarted()) {
                    throw new IllegalStateException("@IdempotentEndpoint handler for " + request.getMethod() + " " + request.getRequestURI()
                            + " started asynchronous processing; its response would be written after its transaction ended."
                            + " Return the response itself from an @IdempotentEndpoint method.");
                }
                if (request.getAttribute(DispatcherServlet.EXCEPTION_ATTRIBUTE) instanceof Exception resolved) {
                    throw resolved; // rolls back: the engine and its listeners see the handler's own exception
                }
                return captured(capture, response);
            });
        } catch (Exception | Error e) {
            if (e == request.getAttribute(DispatcherServlet.EXCEPTION_ATTRIBUTE)) { // the error response Spring MVC wrote goes out unrecorded
                capture.copyBodyToResponse();
                return;
            }
            if (!response.isCommitted()) {
                response.reset();
            }
            throw asThrownToTheContainer(e, wrapper[0]);
        }
        if (answer.kind() == HttpAnswer.Kind.EXECUTED || answer.kind() == HttpAnswer.Kind.UNKEYED
                || answer.kind() == HttpAnswer.Kind.RELEASED) {
            capture.copyBodyToResponse(); // the response as the handler wrote it: status and headers are already there
            return;
        }
        if (answer.kind() == HttpAnswer.Kind.FAILED && !response.isCommitted()) {
            response.reset(); // the handler ran and threw a final failure: nothing of its response may show
        }
        ServletExchanges.write(response, answer.response());
    }

    /**
     * The handler's own exception, for the engine, its listeners and the key policy: Spring MVC
     * wraps any but an {@code IOException} or a {@code ServletException} in a {@code ServletException}
     * ("Request processing failed").
     */
    private static Exception handlersOwn(ServletException e) {
        Throwable cause = e.getCause();
        if (cause instanceof Error error) {
            throw error;
        }
        return cause instanceof Exception own && !(own instanceof IOException || own instanceof ServletException) ? own : e;
    }

    /** What the container gets: Spring MVC's wrapper again if it made one, else the exception, as a filter may throw it. */
    private static ServletException asThrownToTheContainer(Throwable e, @Nullable ServletException wrapper) throws IOException {
        if (wrapper != null && (e == wrapper || e == wrapper.getCause())) {
            return wrapper;
        }
        if (e instanceof IOException io) {
            throw io;
        }
        if (e instanceof RuntimeException runtime) {
            throw runtime;
        }
        if (e instanceof Error error) {
            throw error;
        }
        return e instanceof ServletException servlet ? servlet : new ServletException(e); // no other checked exception leaves a filter chain
    }

    /** The handler's work, with the filter chain's exceptions. */
    private interface Dispatch {
        Response run() throws Exception;
    }

    private static <C> HttpAnswer handle(HttpIdempotency<C> layer, Request request, String client, Dispatch dispatch) throws Exception {
        return layer.handle(request, client, (r, tx) -> dispatch.run());
    }

    /** The response the handler wrote: the status and headers on the response, the body held back. */
    private static Response captured(ContentCachingResponseWrapper capture, HttpServletResponse response) {
        Map<String, List<String>> headers = new LinkedHashMap<>();
        for (String name : response.getHeaderNames()) {
            headers.put(name, List.copyOf(response.getHeaders(name)));
        }
        String contentType = capture.getContentType();
        if (contentType != null && headers.keySet().stream().noneMatch("Content-Type"::equalsIgnoreCase)) {
            headers.put("Content-Type", List.of(contentType));
        }
        return Response.of(capture.getStatus(), headers, capture.getContentAsByteArray());
    }

    @Override
    public String toString() {
        return "IdempotencyFilter[" + layer + ", order=" + order + ", maxRequestBytes=" + maxRequestBytes + "]";
    }
}
