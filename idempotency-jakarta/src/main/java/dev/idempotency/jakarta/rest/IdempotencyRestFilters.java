package dev.idempotency.jakarta.rest;

import dev.idempotency.http.HttpAnswer;
import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.http.internal.Problems;
import dev.idempotency.http.PendingResponse;
import dev.idempotency.http.Request;
import dev.idempotency.http.Response;
import dev.idempotency.jakarta.servlet.internal.Refusals;
import dev.idempotency.jakarta.transaction.JtaTransactions;
import jakarta.annotation.Priority;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;
import jakarta.ws.rs.container.ResourceInfo;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.ext.RuntimeDelegate;
import jakarta.ws.rs.ext.WriterInterceptor;
import jakarta.ws.rs.ext.WriterInterceptorContext;
import java.io.ByteArrayOutputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.sql.Connection;
import java.sql.SQLException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The filters of {@link IdempotencyRestFeature} (see there): the request filter begins the
 * request's JTA transaction and judges the request in it ({@link HttpIdempotency#beginIn}); the
 * response filter, or the writer interceptor when there is a body, records the response and
 * commits. Registered by the feature; a runtime that discovers providers as classes instead (Quarkus
 * REST) registers a class of its own, bound by {@link IdempotentResource}, that delegates to
 * {@link IdempotencyRestFeature#filters()}, with {@link ResourceFailures}, and gives the request
 * filter the resource method's {@link ResourceInfo} ({@link #filter(ContainerRequestContext, ResourceInfo)})
 * for its {@link IdempotentResource#serverErrors()}. Thread-safe: a request's state is its own
 * property, and its thread's.
 */
@IdempotentResource
@Priority(Priorities.USER)
public final class IdempotencyRestFilters implements ContainerRequestFilter, ContainerResponseFilter, WriterInterceptor {

    /** The request property holding a request's open state. */
    static final String STATE = "dev.idempotency.jakarta.rest.state";
    private static final Logger log = LoggerFactory.getLogger(IdempotencyRestFilters.class);
    /** The state open on this thread, between the request filter and the end of its transaction. */
    private static final ThreadLocal<State> OPEN = new ThreadLocal<>();

    private final HttpIdempotency<Connection> layer;
    /** The layer with each choice for a 5xx, for the methods whose annotation decides. */
    private final JtaTransactions transactions;
    /** The matched resource method, which the runtime injects (a proxy to the request's). */
    private volatile @Nullable ResourceInfo resource;
    private final RestScope scope;
    private final int maxRequestBytes;

    IdempotencyRestFilters(HttpIdempotency<Connection> layer, JtaTransactions transactions, RestScope scope, int maxRequestBytes) {
        this.layer = layer;
        this.transactions = transactions;
        this.scope = scope;
        this.maxRequestBytes = maxRequestBytes;
    }

    /** Marks the request open on this thread as failed, so that it rolls back; @return whether there was one */
    static boolean failOpen() {
        State open = OPEN.get();
        if (open == null) {
            return false;
        }
        open.failed = true;
        return true;
    }

    /**
     * Rolls back a transaction that an earlier request on this thread left open (its exception
     * reached the container unmapped, so no response filter ran), before anything joins it.
     */
    static void rollBackLeaked() {
        State leaked = OPEN.get();
        if (leaked != null) {
            log.error("A request on this thread left its transaction open (an exception reached the container unmapped, so no"
                    + " response filter ran); rolling it back now, with its claim");
            leaked.rollback();
        }
    }

    /**
     * For the runtime, which injects the matched resource method's {@link ResourceInfo} (a proxy to
     * each request's) when it registers these filters: a public setter, so that it needs no deep
     * reflection (on the module path, no {@code opens}).
     *
     * @param resource the runtime's resource information
     */
    @Context
    public void setResourceInfo(ResourceInfo resource) {
        this.resource = resource;
    }

    @Override
    public void filter(ContainerRequestContext request) throws IOException {
        filter(request, resource);
    }

    /**
     * The request filter, for a provider class of a runtime's own that delegates to this one: it
     * passes the {@link ResourceInfo} injected into it, so that the method's
     * {@link IdempotentResource#serverErrors()} is heeded.
     *
     * @param request the request
     * @param resource the matched resource method; {@code null} for the feature's choice of a 5xx
     * @throws IOException if the body cannot be read
     * @throws IllegalStateException if the method's annotation names more than one {@code serverErrors} choice
     */
    public void filter(ContainerRequestContext request, @Nullable ResourceInfo resource) throws IOException {
        if (Refusals.isSafe(request.getMethod())) { // changes nothing: the key means nothing, nothing is recorded
            return;
        }
        rollBackLeaked();
        HttpIdempotency<Connection> chosen = layerFor(resource);
        String client = scope.scopeOf(request);
        if (client == null) {
            request.abortWith(jaxrs(Problems.unauthenticated()));
            return;
        }
        byte[] body = body(request);
        if (body == null) {
            request.abortWith(jaxrs(Problems.requestTooLarge(maxRequestBytes, request.getHeaderString(HttpIdempotency.DEFAULT_KEY_HEADER))));
            return;
        }
        URI uri = request.getUriInfo().getRequestUri();
        String target = uri.getRawQuery() == null ? uri.getRawPath() : uri.getRawPath() + "?" + uri.getRawQuery();
        Request layerRequest = Request.of(request.getMethod(), target, copy(request.getHeaders()), body);
        JtaTransactions.Span span = transactions.begin();
        Connection connection = null;
        PendingResponse pending;
        try {
            connection = span.connection();
            pending = chosen.beginIn(connection, layerRequest, client);
        } catch (RuntimeException | Error e) {
            close(connection);
            rollback(span, e);
            throw e;
        }
        State state = new State(span, connection, pending);
        if (pending.answered()) { // a replay, 400, 409, 422, a recorded failure: nothing of the request runs
            state.rollback(); // it wrote nothing; after a 409 the database may have aborted it
            request.abortWith(jaxrs(pending.answer().response()));
            return;
        }
        request.setProperty(STATE, state);
        OPEN.set(state);
    }

    @Override
    public void filter(ContainerRequestContext request, ContainerResponseContext response) {
        State state = (State) request.getProperty(STATE);
        if (state == null || state.span.ended()) {
            return;
        }
        if (state.failed || state.span.rollbackOnly()) { // the resource method threw: its writes go, with the claim
            request.removeProperty(STATE);
            state.rollback();
            return;
        }
        state.status = response.getStatus();
        if (!response.hasEntity()) {
            request.removeProperty(STATE);
            state.complete(Response.of(response.getStatus(), strings(response.getHeaders(), null), new byte[0]));
        }
        // else the writer interceptor records it, once the body is written
    }

    @Override
    public void aroundWriteTo(WriterInterceptorContext context) throws IOException {
        State state = (State) context.getProperty(STATE);
        if (state == null || state.span.ended()) {
            context.proceed();
            return;
        }
        context.removeProperty(STATE);
        OutputStream out = context.getOutputStream();
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        context.setOutputStream(body);
        try {
            context.proceed();
        } catch (IOException | RuntimeException | Error e) {
            state.rollback();
            throw e;
        } finally {
            context.setOutputStream(out);
        }
        byte[] bytes = body.toByteArray();
        state.complete(Response.of(state.status, strings(context.getHeaders(), context.getMediaType()), bytes));
        out.write(bytes); // after the commit
    }

    /** The layer for the request's method: its annotation's choice for a 5xx (the method's, else its class's), else the feature's. */
    private HttpIdempotency<Connection> layerFor(@Nullable ResourceInfo resource) {
        Method method = resource == null ? null : resource.getResourceMethod();
        if (method == null) {
            return layer;
        }
        IdempotentResource own = method.getAnnotation(IdempotentResource.class);
        IdempotentResource annotation = own != null ? own : method.getDeclaringClass().getAnnotation(IdempotentResource.class);
        return annotation == null ? layer : layer.forHandler(annotation.serverErrors(), "@IdempotentResource", method.toString());
    }

    /** @return the body, up to the limit, which the resource method then reads again; {@code null} if over it */
    private byte @Nullable [] body(ContainerRequestContext request) throws IOException {
        if (request.getLength() > maxRequestBytes) {
            return null;
        }
        byte[] body;
        try (InputStream in = request.getEntityStream()) {
            body = in.readNBytes(maxRequestBytes + 1);
        }
        if (body.length > maxRequestBytes) {
            return null;
        }
        request.setEntityStream(new ByteArrayInputStream(body));
        return body;
    }

    private static Map<String, List<String>> copy(MultivaluedMap<String, String> headers) {
        Map<String, List<String>> copy = new LinkedHashMap<>();
        headers.forEach((name, values) -> copy.put(name, List.copyOf(values)));
        return copy;
    }

    /** The response's headers as their strings, with the Content-Type of the body written. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static Map<String, List<String>> strings(MultivaluedMap<String, Object> headers, @Nullable MediaType mediaType) {
        Map<String, List<String>> strings = new LinkedHashMap<>();
        headers.forEach((name, values) -> {
            List<String> texts = new ArrayList<>();
            for (Object value : values) {
                if (value instanceof String text) {
                    texts.add(text);
                } else if (value != null) {
                    RuntimeDelegate.HeaderDelegate delegate = RuntimeDelegate.getInstance().createHeaderDelegate(value.getClass());
                    texts.add(delegate != null ? delegate.toString(value) : value.toString());
                }
            }
            strings.put(name, texts);
        });
        if (mediaType != null && strings.keySet().stream().noneMatch("Content-Type"::equalsIgnoreCase)) {
            strings.put("Content-Type", List.of(mediaType.toString()));
        }
        return strings;
    }

    /** @return the layer's answer as a Jakarta REST response: its status, headers and bytes */
    static jakarta.ws.rs.core.Response jaxrs(Response answer) {
        jakarta.ws.rs.core.Response.ResponseBuilder builder = jakarta.ws.rs.core.Response.status(answer.status());
        answer.headers().forEach((name, values) -> values.forEach(value -> builder.header(name, value)));
        return builder.entity(answer.body().length == 0 ? null : answer.body()).build();
    }

    private static void close(@Nullable Connection connection) {
        if (connection != null) {
            try {
                connection.close();
            } catch (SQLException ignored) {
                // the transaction manager ends the connection's part in the transaction
            }
        }
    }

    private static void rollback(JtaTransactions.Span span, Throwable failure) {
        try {
            span.rollback();
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    @Override
    public String toString() {
        return "IdempotencyRestFilters[" + layer + ", " + transactions + ", maxRequestBytes=" + maxRequestBytes + "]";
    }

    /** One request's open transaction, its connection and its pending response. Used on the request's thread only. */
    private static final class State {
        final JtaTransactions.Span span;
        final Connection connection;
        final PendingResponse pending;
        int status;
        volatile boolean failed;

        State(JtaTransactions.Span span, Connection connection, PendingResponse pending) {
            this.span = span;
            this.connection = connection;
            this.pending = pending;
        }

        /**
         * Records the response and commits; a released 5xx rolls back, with the method's writes; on a
         * failure rolls back, and the failure goes on (a 500).
         */
        HttpAnswer complete(Response response) {
            HttpAnswer answer;
            try {
                answer = pending.complete(response);
            } catch (RuntimeException | Error e) {
                end();
                IdempotencyRestFilters.rollback(span, e);
                throw e;
            }
            if (answer.rollbackRequired()) { // released: nothing of the key kept, the writes go
                rollback();
                return answer;
            }
            end();
            span.commit();
            return answer;
        }

        void rollback() {
            end();
            try {
                span.rollback();
            } catch (RuntimeException e) {
                log.warn("The rollback of a request's transaction failed; the transaction manager's timeout ends it", e);
            }
        }

        private void end() {
            close(connection);
            if (OPEN.get() == this) {
                OPEN.remove();
            }
        }
    }
}
