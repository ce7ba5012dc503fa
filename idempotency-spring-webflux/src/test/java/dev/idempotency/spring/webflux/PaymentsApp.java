package dev.idempotency.spring.webflux;

import dev.idempotency.KeyPolicy;
import dev.idempotency.http.ServerErrors;
import dev.idempotency.r2dbc.R2dbcIdempotency;
import io.r2dbc.spi.ConnectionFactory;
import java.net.URI;
import java.security.Principal;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.server.reactive.ReactorHttpHandlerAdapter;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.reactive.TransactionalOperator;
import org.springframework.util.function.SingletonSupplier;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.config.EnableWebFlux;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.adapter.WebHttpHandlerBuilder;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerResponse;

/**
 * A plain Spring WebFlux application (no Boot) with {@link IdempotencyWebFilter}, on Reactor Netty
 * at 127.0.0.1 and a random port: the payments controller writes through {@code DatabaseClient}, in
 * the transaction of an {@code R2dbcTransactionManager} that the filter runs. The client is named
 * by an {@code X-Client} header, which a filter before it makes the exchange's principal; a filter
 * before both can lose answers, closing the connection once the response is ready.
 */
final class PaymentsApp implements AutoCloseable {

    /** The largest recorded response of these tests, in bytes. */
    static final int MAX_RESULT_BYTES = 2048;

    final WebFluxDatabase database;
    final AnnotationConfigApplicationContext context;
    final Payments payments;
    final Lossy lossy;
    private final DisposableServer server;

    PaymentsApp(WebFluxDatabase database) {
        this.database = database;
        this.context = new AnnotationConfigApplicationContext();
        context.registerBean(WebFluxDatabase.class, () -> database);
        context.register(Config.class);
        context.refresh();
        this.payments = context.getBean(Payments.class);
        this.lossy = context.getBean(Lossy.class);
        ReactorHttpHandlerAdapter adapter = new ReactorHttpHandlerAdapter(WebHttpHandlerBuilder.applicationContext(context).build());
        this.server = HttpServer.create().host("127.0.0.1").port(0).handle(adapter).bindNow(Duration.ofSeconds(30));
    }

    URI uri(String path) {
        return URI.create("http://127.0.0.1:" + server.port() + path);
    }

    int port() {
        return server.port();
    }

    @Override
    public void close() {
        server.disposeNow(Duration.ofSeconds(10));
        context.close();
    }

    @Configuration(proxyBeanMethods = false)
    @EnableWebFlux
    static class Config {

        @Bean
        ConnectionFactory connectionFactory(WebFluxDatabase database) {
            return database.factory();
        }

        @Bean
        R2dbcTransactionManager transactionManager(ConnectionFactory connectionFactory) {
            return new R2dbcTransactionManager(connectionFactory);
        }

        @Bean
        R2dbcIdempotency engine(WebFluxDatabase database) {
            return R2dbcIdempotency.builder(database.dialect()).table(WebFluxDatabase.TABLE)
                    .keyPolicy(KeyPolicy.builder().lockTimeout(Duration.ofSeconds(1)).maxResultBytes(MAX_RESULT_BYTES).build())
                    .build();
        }

        // tag::filter[]
        @Bean
        IdempotencyWebFilter idempotencyWebFilter(R2dbcIdempotency engine, ConnectionFactory connectionFactory,
                                                  R2dbcTransactionManager transactionManager, ObjectProvider<HandlerMapping> mappings) {
            return IdempotencyWebFilter.builder(engine, connectionFactory, TransactionalOperator.create(transactionManager),
                    SingletonSupplier.of(() -> mappings.orderedStream().toList())).build();
        }
        // end::filter[]

        /** The client of the {@code X-Client} header becomes the exchange's principal; none without the header. */
        @Bean
        @Order(-100)
        WebFilter authentication() {
            return (exchange, chain) -> {
                String client = exchange.getRequest().getHeaders().getFirst("X-Client");
                if (client == null) {
                    return chain.filter(exchange);
                }
                Principal principal = () -> client;
                return chain.filter(exchange.mutate().principal(Mono.just(principal)).build());
            };
        }

        /** r2dbc-h2 runs each statement on the calling thread: requests leave Reactor Netty's event loop first. */
        @Bean
        @Order(-200)
        WebFilter offEventLoop(WebFluxDatabase database) {
            return (exchange, chain) -> database.blockingDriver() ? chain.filter(exchange).subscribeOn(Schedulers.boundedElastic())
                    : chain.filter(exchange);
        }

        @Bean
        Lossy lossy() {
            return new Lossy();
        }

        @Bean
        Payments payments(ConnectionFactory connectionFactory) {
            return new Payments(DatabaseClient.create(connectionFactory));
        }
    }

    /** Loses every {@code loseEvery}-th answer to {@code /payments}: the server has committed, the client gets a closed connection. */
    @Order(Ordered.HIGHEST_PRECEDENCE)
    static final class Lossy implements WebFilter {
        volatile int loseEvery;
        final AtomicInteger seen = new AtomicInteger();

        @Override
        public Mono<Void> filter(ServerWebExchange exchange, org.springframework.web.server.WebFilterChain chain) {
            int every = loseEvery;
            if (every == 0 || seen.incrementAndGet() % every != 0) {
                return chain.filter(exchange);
            }
            ServerHttpResponse lost = new ServerHttpResponseDecorator(exchange.getResponse()) {
                @Override
                public Mono<Void> writeWith(org.reactivestreams.Publisher<? extends org.springframework.core.io.buffer.DataBuffer> body) {
                    HttpServerResponse connection = ServerHttpResponseDecorator.getNativeResponse(getDelegate());
                    return Flux.from(body).doOnNext(org.springframework.core.io.buffer.DataBufferUtils::release)
                            .then(Mono.fromRunnable(() -> connection.withConnection(c -> c.channel().close())));
                }
            };
            return chain.filter(exchange.mutate().response(lost).build());
        }
    }

    /** The payments controller: each run counted by client and key, each payment a row written in the request's transaction. */
    @RestController
    static class Payments {
        final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
        /** Released by a test to let {@code /payments/slow} finish. */
        volatile Sinks.Empty<Void> gate = Sinks.empty();
        volatile CountDownLatch entered = new CountDownLatch(1);
        private final DatabaseClient db;

        Payments(DatabaseClient db) {
            this.db = db;
        }

        int runs(String client, String key) {
            AtomicInteger n = runs.get(client + "/" + key);
            return n == null ? 0 : n.get();
        }

        // tag::handler[]
        @PostMapping("/payments/{mode}")
        @IdempotentWebFluxEndpoint
        Mono<ResponseEntity<String>> pay(@PathVariable("mode") String mode, @RequestBody(required = false) String note,
                                         @RequestHeader("X-Client") String client, @RequestHeader(value = "Idempotency-Key", required = false) String key) {
            runs.computeIfAbsent(client + "/" + key, k -> new AtomicInteger()).incrementAndGet();
            String id = new UUID(ThreadLocalRandom.current().nextLong(), ThreadLocalRandom.current().nextLong()).toString(); // UUID.randomUUID() blocks: SecureRandom
            Mono<Long> insert = db.sql("INSERT INTO " + WebFluxDatabase.PAYMENTS + " (client, idem_key, note) VALUES (:client, :key, :note)")
                    .bind("client", client).bind("key", String.valueOf(key)).bind("note", String.valueOf(note)).fetch().rowsUpdated();
            Mono<ResponseEntity<String>> created = Mono.fromSupplier(() -> ResponseEntity.status(201)
                    .header("Location", "/payments/" + id)
                    .header("Set-Cookie", "seen=" + id)
                    .contentType(MediaType.APPLICATION_JSON)
                    .body("{\"id\":\"" + id + "\",\"note\":\"" + note + "\"}"));
            return switch (mode) {
                case "fail" -> insert.then(Mono.error(new IllegalStateException("the payment provider refused")));
                case "large" -> insert.thenReturn(ResponseEntity.status(201).body("x".repeat(MAX_RESULT_BYTES * 2)));
                case "slow" -> insert.then(Mono.fromRunnable(entered::countDown)).then(gate.asMono()).then(created);
                default -> insert.then(created);
            };
        }
        // end::handler[]

        /** Inserts and answers 502 in a key's first run, 201 after; its annotation releases server errors. */
        @PostMapping("/released")
        @IdempotentWebFluxEndpoint(serverErrors = ServerErrors.RELEASE)
        Mono<ResponseEntity<String>> payReleased(@RequestBody(required = false) String note, @RequestHeader("X-Client") String client,
                                                 @RequestHeader(value = "Idempotency-Key", required = false) String key) {
            boolean first = runs(client, key) == 0;
            return pay("pay", note, client, key).map(created -> first
                    ? ResponseEntity.status(502).headers(created.getHeaders()).body(created.getBody()) : created);
        }

        @GetMapping("/payments/{id}")
        @IdempotentWebFluxEndpoint
        Mono<String> get(@PathVariable("id") String id) {
            return Mono.just("payment " + id);
        }

        @PostMapping("/unprotected")
        Mono<ResponseEntity<String>> unprotected(@RequestHeader("X-Client") String client, @RequestHeader("Idempotency-Key") String key) {
            runs.computeIfAbsent(client + "/" + key, k -> new AtomicInteger()).incrementAndGet();
            return db.sql("INSERT INTO " + WebFluxDatabase.PAYMENTS + " (client, idem_key, note) VALUES (:client, :key, 'unprotected')")
                    .bind("client", client).bind("key", key).fetch().rowsUpdated()
                    .thenReturn(ResponseEntity.status(201).body("paid"));
        }
    }
}
