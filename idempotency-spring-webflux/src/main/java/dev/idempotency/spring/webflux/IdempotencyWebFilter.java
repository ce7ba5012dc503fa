package dev.idempotency.spring.webflux;

import dev.idempotency.IdempotentCall;
import dev.idempotency.Outcome;
import dev.idempotency.ReleaseKeyException;
import dev.idempotency.ResultTooLargeException;
import dev.idempotency.http.HttpAnswer;
import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.http.Request;
import dev.idempotency.http.Response;
import dev.idempotency.http.internal.Problems;
import dev.idempotency.r2dbc.R2dbcIdempotency;
import io.r2dbc.spi.ConnectionFactory;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.r2dbc.connection.ConnectionFactoryUtils;
import org.springframework.transaction.reactive.TransactionalOperator;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebExchangeDecorator;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Applies {@link IdempotentWebFluxEndpoint} in Spring WebFlux, without blocking: a {@link WebFilter} that,
 * for a request whose handler method carries the annotation, runs the rest of the chain (the
 * {@code DispatcherHandler}, the controller, its encoders) through the R2DBC engine
 * ({@link R2dbcIdempotency}) in a transaction of the application's {@link TransactionalOperator},
 * on the connection that Spring's {@code R2dbcTransactionManager} binds to it
 * ({@link ConnectionFactoryUtils#getConnection}, which {@code DatabaseClient} and
 * {@code @Transactional} code join), and records the response in that same transaction. Every
 * status is the HTTP layer's decision ({@link HttpIdempotency#admit}, {@link HttpIdempotency#answer}).
 *
 * <p><b>Why a filter.</b> A retry must get back the response as it was written: the status, the
 * headers and the body's bytes after the encoders ran. A filter holds the body back (the handler
 * writes to a response of its own) until the transaction has committed, records exactly those
 * bytes, and decides what reaches the client; an advice around the method would see its value
 * before encoding, so that a replay would be encoded again, and could differ. It applies only to
 * requests whose handler is annotated: it asks WebFlux's handler mappings, as the
 * {@code DispatcherHandler} will, with the lookup's exchange attributes kept apart from the
 * request's.
 *
 * <p><b>Per request.</b> A safe method (GET, HEAD, OPTIONS, TRACE) passes through untouched. Any other:
 * <ol>
 *   <li>The scope ({@link WebFluxScope}); none: 401, problem {@code unauthenticated}.</li>
 *   <li>The body is read, up to {@code maxRequestBytes} (1 MiB by default; more: 413, problem
 *       {@code request-too-large}), for the fingerprint; the handler reads it again.</li>
 *   <li>The layer answers by its table: 400, 409 with {@code Retry-After} (after which the
 *       transaction is rolled back: PostgreSQL aborted it), 422 and replays are written by this
 *       filter, and the handler does not run. Otherwise the handler runs in the transaction, its
 *       response is recorded before the commit, and sent after it.</li>
 *   <li>A handler whose publisher fails records nothing: the transaction rolls back, and the error
 *       reaches WebFlux's exception handlers (a 500). The client's retry with the same key runs the
 *       handler again. A response over the key policy's result size limit rolls back too, and the
 *       {@code response-too-large} problem is recorded in a transaction of its own, as the layer's
 *       {@code handle} does.</li>
 *   <li>A subscriber that cancels (the client went away) rolls the transaction back: nothing of the
 *       key is recorded, and the next attempt runs the handler.</li>
 * </ol>
 * The handler's response is recorded as it is, whatever its status, an error response that an
 * {@code @ExceptionHandler} wrote included: throw (fail the publisher) without handling the
 * exception to roll back. A 5xx is not recorded where server errors are released (the layer's
 * {@link HttpIdempotency#serverErrors()}, or {@link IdempotentWebFluxEndpoint#serverErrors()} for a
 * method): it is sent, the transaction rolled back with the handler's writes and the key's claim,
 * and the retry runs the handler again, by the layer's decision ({@link HttpIdempotency#released}).
 *
 * <p>Order it after authentication (Spring Security's {@code WebFilterChainProxy} is at -100; the
 * default here is {@value #DEFAULT_ORDER}). Thread-safe once built: one filter serves every request.
 */
public final class IdempotencyWebFilter implements WebFilter, Ordered {

    /** The default filter order: 0, after Spring Security's filter chain (-100). */
    public static final int DEFAULT_ORDER = 0;
    /** The largest request body read by default, in bytes: 1 MiB. */
    public static final int DEFAULT_MAX_REQUEST_BYTES = 1 << 20;

    private static final Logger log = LoggerFactory.getLogger(IdempotencyWebFilter.class);

    private final R2dbcIdempotency engine;
    private final ConnectionFactory connections;
    private final TransactionalOperator transactions;
    private final Supplier<? extends List<? extends HandlerMapping>> mappings;
    private final HttpIdempotency<?> layer;
    /** The layer with each choice for a handler's 5xx, for the handlers whose annotation decides. */
    private final WebFluxScope scope;
    /** A body declared over the limit is read and dropped up to this many times the limit, then the 413 sent. */
    private static final long DRAIN_FACTOR = 16;

    private final int maxRequestBytes;
    private final int order;

    private IdempotencyWebFilter(Builder b) {
        this.engine = b.engine;
        this.connections = b.connections;
        this.transactions = b.transactions;
        this.mappings = b.mappings;
        this.layer = b.layer != null ? b.layer : HttpIdempotency.builder(b.engine.keyPolicy()).build();
        this.scope = b.scope;
        this.maxRequestBytes = b.maxRequestBytes;
        this.order = b.order;
    }

    /**
     * @param engine the R2DBC engine that records the keys
     * @param connections the connection factory of the transaction manager behind {@code transactions}
     * @param transactions the application's transactional operator, over an {@code R2dbcTransactionManager}
     *     of {@code connections}
     * @param mappings the handler mappings to find a request's handler in, in the
     *     {@code DispatcherHandler}'s order; read at each request (so that they may be created after the filter)
     * @return a builder with the layer's defaults on the engine's key policy, the principal's scope,
     *     the default body limit and order
     */
    public static Builder builder(R2dbcIdempotency engine, ConnectionFactory connections, TransactionalOperator transactions,
                                  Supplier<? extends List<? extends HandlerMapping>> mappings) {
        return new Builder(engine, connections, transactions, mappings);
    }

    @Override
    public int getOrder() {
        return order;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (Request.isSafe(exchange.getRequest().getMethod().name())) { // changes nothing: nothing is recorded
            return chain.filter(exchange);
        }
        return layerFor(exchange).flatMap(chosen -> chosen.isPresent() ? guarded(exchange, chain, chosen.get()) : chain.filter(exchange));
    }

    /**
     * @return the layer for the request's handler if it is annotated {@link IdempotentWebFluxEndpoint}
     *     (the annotation's choice for a 5xx, else the layer's own), else empty; looked up on a copy of the attributes
     */
    private Mono<Optional<HttpIdempotency<?>>> layerFor(ServerWebExchange exchange) {
        ServerWebExchange lookup = new ServerWebExchangeDecorator(exchange) {
            private final Map<String, Object> attributes = new ConcurrentHashMap<>(exchange.getAttributes());

            @Override
            public Map<String, Object> getAttributes() {
                return attributes;
            }
        };
        return Flux.fromIterable(mappings.get())
                .concatMap(mapping -> mapping.getHandler(lookup))
                .next()
                .map(handler -> {
                    if (!(handler instanceof HandlerMethod method)) {
                        return Optional.<IdempotentWebFluxEndpoint>empty();
                    }
                    IdempotentWebFluxEndpoint own = method.getMethodAnnotation(IdempotentWebFluxEndpoint.class);
                    return Optional.ofNullable(own != null ? own
                            : AnnotatedElementUtils.findMergedAnnotation(method.getBeanType(), IdempotentWebFluxEndpoint.class));
                })
                .onErrorResume(e -> { // no match for the method or media type: the DispatcherHandler answers it
                    log.trace("No handler for {} {}: {}", exchange.getRequest().getMethod(), exchange.getRequest().getPath(), e.toString());
                    return Mono.just(Optional.empty());
                })
                .defaultIfEmpty(Optional.empty())
                .map(endpoint -> endpoint.map(annotation -> layerOf(annotation, exchange)));
    }

    /** The annotation's choice of a layer for a 5xx, else the layer's own. */
    private HttpIdempotency<?> layerOf(IdempotentWebFluxEndpoint endpoint, ServerWebExchange exchange) {
        return layer.forHandler(endpoint.serverErrors(), "@IdempotentWebFluxEndpoint",
                "the handler of " + exchange.getRequest().getMethod() + " " + exchange.getRequest().getPath());
    }

    private Mono<Void> guarded(ServerWebExchange exchange, WebFilterChain chain, HttpIdempotency<?> chosen) {
        ServerHttpRequest request = exchange.getRequest();
        return scope.scopeOf(exchange).map(Optional::of).defaultIfEmpty(Optional.empty()).flatMap(client -> {
            if (client.isEmpty()) {
                return write(exchange.getResponse(), Problems.unauthenticated());
            }
            return body(request).flatMap(body -> {
                if (body.isEmpty()) {
                    exchange.getResponse().getHeaders().set("Connection", "close"); // the body over the limit is not kept
                    return write(exchange.getResponse(), Problems.requestTooLarge(maxRequestBytes,
                            request.getHeaders().getFirst(HttpIdempotency.DEFAULT_KEY_HEADER)));
                }
                return admitted(exchange, chain, client.get(), body.get(), chosen);
            });
        });
    }

    private Mono<Void> admitted(ServerWebExchange exchange, WebFilterChain chain, String client, byte[] body, HttpIdempotency<?> chosen) {
        ServerHttpRequest request = exchange.getRequest();
        HttpIdempotency.Admission admission = chosen.admit(Request.of(request.getMethod().name(), target(request), headers(request), body),
                client);
        HttpAnswer refusal = admission.refusal();
        if (refusal != null) {
            return write(exchange.getResponse(), refusal.response());
        }
        ServerHttpRequest again = new ServerHttpRequestDecorator(request) {
            @Override
            public Flux<DataBuffer> getBody() {
                return Flux.defer(() -> Flux.just(exchange.getResponse().bufferFactory().wrap(body)));
            }
        };
        IdempotentCall<Response> call = admission.call();
        if (call == null) { // unkeyed: the handler runs as it would without the filter, in a transaction, unrecorded
            return transactions.transactional(chain.filter(exchange.mutate().request(again).build()));
        }
        CapturedResponse captured = new CapturedResponse(exchange.getResponse());
        ServerWebExchange handling = exchange.mutate().request(again).response(captured).build();
        Mono<Response> handler = chain.filter(handling).then(Mono.fromCallable(captured::response)).map(chosen::released);
        return inTransaction(call, () -> handler, chosen::answer)
                // released: the engine released the claim, the operator rolled back the handler's writes
                .onErrorResume(ReleaseKeyException.class, released -> Mono.just(chosen.answerReleased(call.key(), released)))
                .onErrorResume(ResultTooLargeException.class, tooLarge -> {
                    Response problem = chosen.tooLargeProblem(call.key(), tooLarge);
                    return inTransaction(call, () -> Mono.just(problem), chosen::answerTooLarge)
                            .onErrorResume(ResultTooLargeException.class, evenTheProblem -> Mono.just(chosen.tooLargeUnrecorded(call.key(), tooLarge)));
                })
                .flatMap(answer -> write(exchange.getResponse(), answer.response()));
    }

    /**
     * Runs {@code work} for {@code call} in a transaction of the operator, on the connection it
     * binds, and answers its outcome; rolled back where the answer requires it.
     */
    private Mono<HttpAnswer> inTransaction(IdempotentCall<Response> call, Supplier<? extends Publisher<? extends Response>> work,
                                           Function<Outcome<Response>, HttpAnswer> answers) {
        return transactions.execute(status -> ConnectionFactoryUtils.getConnection(connections)
                .flatMap(connection -> engine.execute(call, connection, work))
                .map(outcome -> {
                    HttpAnswer answer = answers.apply(outcome);
                    if (answer.rollbackRequired()) {
                        status.setRollbackOnly();
                    }
                    return answer;
                })).singleOrEmpty();
    }

    /** @return the body, or empty if it is over the limit */
    private Mono<Optional<byte[]>> body(ServerHttpRequest request) {
        long declared = request.getHeaders().getContentLength();
        if (declared > maxRequestBytes) {
            if (declared > DRAIN_FACTOR * maxRequestBytes) {
                return Mono.just(Optional.empty()); // not read: the connection closes, the client may miss the 413
            }
            // read and dropped, so that the 413 reaches a client still sending (a close with unread bytes resets it)
            return request.getBody().doOnNext(DataBufferUtils::release).then(Mono.just(Optional.empty()));
        }
        return DataBufferUtils.join(request.getBody(), maxRequestBytes)
                .map(buffer -> {
                    try {
                        byte[] bytes = new byte[buffer.readableByteCount()];
                        buffer.read(bytes);
                        return Optional.of(bytes);
                    } finally {
                        DataBufferUtils.release(buffer);
                    }
                })
                .defaultIfEmpty(Optional.of(new byte[0]))
                .onErrorResume(DataBufferLimitException.class, e -> Mono.just(Optional.empty()));
    }

    /** @return the path and query, as the HTTP layer fingerprints them */
    private static String target(ServerHttpRequest request) {
        String path = request.getURI().getRawPath();
        String query = request.getURI().getRawQuery();
        return query == null ? path : path + "?" + query;
    }

    private static Map<String, List<String>> headers(ServerHttpRequest request) {
        Map<String, List<String>> headers = new LinkedHashMap<>();
        request.getHeaders().forEach((name, values) -> headers.put(name, List.copyOf(values)));
        return headers;
    }

    /** Writes the layer's answer: its status, its headers (replacing the response's of the same name) and its body. */
    private static Mono<Void> write(ServerHttpResponse response, Response answer) {
        response.setStatusCode(HttpStatusCode.valueOf(answer.status()));
        answer.headers().forEach((name, values) -> response.getHeaders().put(name, new ArrayList<>(values)));
        byte[] body = answer.body();
        response.getHeaders().setContentLength(body.length);
        return response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(body)));
    }

    @Override
    public String toString() {
        return "IdempotencyWebFilter[" + engine + ", " + layer + ", order=" + order + ", maxRequestBytes=" + maxRequestBytes + "]";
    }

    /** Builds an {@link IdempotencyWebFilter}. Not thread-safe; what it builds is. */
    public static final class Builder {
        private final R2dbcIdempotency engine;
        private final ConnectionFactory connections;
        private final TransactionalOperator transactions;
        private final Supplier<? extends List<? extends HandlerMapping>> mappings;
        private @Nullable HttpIdempotency<?> layer;
        private WebFluxScope scope = WebFluxScope.principal();
        private int maxRequestBytes = DEFAULT_MAX_REQUEST_BYTES;
        private int order = DEFAULT_ORDER;

        private Builder(R2dbcIdempotency engine, ConnectionFactory connections, TransactionalOperator transactions,
                        Supplier<? extends List<? extends HandlerMapping>> mappings) {
            this.engine = Objects.requireNonNull(engine, "engine");
            this.connections = Objects.requireNonNull(connections, "connections");
            this.transactions = Objects.requireNonNull(transactions, "transactions");
            this.mappings = Objects.requireNonNull(mappings, "mappings");
        }

        /**
         * @param layer the HTTP layer whose decisions the filter takes (key header, fingerprint,
         *     replayed headers, {@code Retry-After}, failure response), built with
         *     {@link HttpIdempotency#builder(dev.idempotency.KeyPolicy)} on the engine's key policy; by
         *     default the layer's defaults
         * @return this builder
         */
        public Builder layer(HttpIdempotency<?> layer) {
            this.layer = Objects.requireNonNull(layer, "layer");
            return this;
        }

        /**
         * @param scope the scope of a request's key; {@link WebFluxScope#principal()} by default
         * @return this builder
         */
        public Builder scope(WebFluxScope scope) {
            this.scope = Objects.requireNonNull(scope, "scope");
            return this;
        }

        /**
         * @param maxRequestBytes the largest body read, in bytes (at least 1)
         * @return this builder
         * @throws IllegalArgumentException if less than 1
         */
        public Builder maxRequestBytes(int maxRequestBytes) {
            if (maxRequestBytes < 1) {
                throw new IllegalArgumentException("maxRequestBytes must be at least 1, was " + maxRequestBytes);
            }
            this.maxRequestBytes = maxRequestBytes;
            return this;
        }

        /**
         * @param order this filter's order among the web filters
         * @return this builder
         */
        public Builder order(int order) {
            this.order = order;
            return this;
        }

        /** @return the filter */
        public IdempotencyWebFilter build() {
            return new IdempotencyWebFilter(this);
        }
    }
}
