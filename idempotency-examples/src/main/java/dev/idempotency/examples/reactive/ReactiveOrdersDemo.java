package dev.idempotency.examples.reactive;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.KeyPolicy;
import dev.idempotency.Outcome;
import dev.idempotency.jdbc.dialect.H2Dialect;
import dev.idempotency.jdbc.dialect.TableName;
import dev.idempotency.r2dbc.R2dbcIdempotency;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Orders placed once per key, from reactive code, in the caller's own R2DBC transaction: the
 * order's insert and the key's record commit together, or neither does. On embedded H2 through
 * r2dbc-h2, so that it runs with nothing installed:
 *
 * <pre>mvn -q -pl idempotency-examples -am compile exec:java -Dexec.mainClass=dev.idempotency.examples.reactive.ReactiveOrdersDemo</pre>
 *
 * <p>A client places an order, loses the answer and retries: the retry gets the first result back
 * and nothing is inserted again. The same key with another order is refused. Eight duplicates of
 * one order sent at once insert it once. H2's R2DBC driver runs each statement on the thread that
 * subscribes, so the demonstration keeps its calls off Reactor's non-blocking threads; with
 * r2dbc-postgresql or r2dbc-mariadb the same code runs on the drivers' event loops.
 */
public final class ReactiveOrdersDemo {

    private static final String ORDERS = "demo_order";
    private static final Duration WAIT = Duration.ofSeconds(30);

    private final ConnectionFactory connections;
    private final AtomicLong ids = new AtomicLong();
    // tag::engine[]
    private final R2dbcIdempotency engine = R2dbcIdempotency.builder(new H2Dialect())
            .table(TableName.of("demo_idempotency_record"))
            .keyPolicy(KeyPolicy.builder().lockTimeout(Duration.ofSeconds(5)).build())
            .build();
    // end::engine[]

    ReactiveOrdersDemo(ConnectionFactory connections) {
        this.connections = connections;
    }

    /** @param args none */
    public static void main(String[] args) {
        run(System.out);
    }

    /**
     * @param out where the demonstration prints
     * @return the orders inserted, by key
     */
    static Map<String, Long> run(PrintStream out) {
        ReactiveOrdersDemo demo = new ReactiveOrdersDemo(
                ConnectionFactories.get("r2dbc:h2:mem:///reactive-orders?options=DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=5000"));
        demo.createTables();

        IdempotencyKey key = IdempotencyKey.of("shop-1", "order-1001");
        out.println("first attempt:          " + describe(demo.placeOrder(key, "3 books").block(WAIT)));
        out.println("retry, answer was lost: " + describe(demo.placeOrder(key, "3 books").block(WAIT)));
        out.println("same key, other order:  " + describe(demo.placeOrder(key, "1 pen").block(WAIT)));

        IdempotencyKey busy = IdempotencyKey.of("shop-1", "order-1002");
        List<Outcome<String>> duplicates = Flux.range(0, 8)
                .flatMap(i -> demo.placeOrderUntilDecided(busy, "2 lamps"), 8)
                .collectList().block(WAIT);
        long executed = duplicates.stream().filter(o -> o instanceof Outcome.Executed).count();
        out.println("8 duplicates at once:   " + executed + " executed, " + (duplicates.size() - executed) + " replayed");

        Map<String, Long> orders = demo.ordersByKey();
        out.println("orders inserted:        " + orders + ": the work ran once per key");
        return orders;
    }

    // tag::placeOrder[]
    /** Places the order in a transaction of its own connection: the insert and the key's record commit together. */
    Mono<Outcome<String>> placeOrder(IdempotencyKey key, String order) {
        IdempotentCall<String> call = IdempotentCall.of(key, Fingerprint.of(order));
        return Mono.usingWhen(connections.create(),
                c -> Mono.from(c.beginTransaction())
                        .then(engine.execute(call, c, () -> insertOrder(c, key, order)))
                        .flatMap(outcome -> Mono.from(outcome instanceof Outcome.Executed || outcome instanceof Outcome.Replayed
                                ? c.commitTransaction() : c.rollbackTransaction()).thenReturn(outcome)),
                Connection::close,
                (c, failure) -> Mono.from(c.rollbackTransaction()).then(Mono.from(c.close())),
                Connection::close)
                .subscribeOn(Schedulers.boundedElastic()); // r2dbc-h2 runs statements on the subscribing thread
    }
    // end::placeOrder[]

    /** As a client would: a key still in progress is asked again a little later, until it is decided. */
    private Mono<Outcome<String>> placeOrderUntilDecided(IdempotencyKey key, String order) {
        return placeOrder(key, order).flatMap(outcome -> outcome instanceof Outcome.InProgress
                ? Mono.delay(Duration.ofMillis(20)).then(placeOrderUntilDecided(key, order))
                : Mono.just(outcome));
    }

    private Mono<String> insertOrder(Connection c, IdempotencyKey key, String order) {
        long id = ids.incrementAndGet();
        return Flux.from(c.createStatement("INSERT INTO " + ORDERS + " (id, idem_key, item) VALUES ($1, $2, $3)")
                        .bind("$1", id).bind("$2", key.id()).bind("$3", order).execute())
                .concatMap(result -> result.getRowsUpdated())
                .then(Mono.just("order #" + id + ": " + order));
    }

    private static String describe(Outcome<String> outcome) {
        if (outcome instanceof Outcome.Executed<String> executed) {
            return "EXECUTED " + executed.value();
        }
        if (outcome instanceof Outcome.Replayed<String> replayed) {
            return "REPLAYED " + replayed.value();
        }
        return outcome.getClass().getSimpleName().toUpperCase(java.util.Locale.ROOT) + ": nothing inserted";
    }

    private void createTables() {
        // tag::createTable[]
        engine.createTableIfMissing(connections).block(WAIT); // once, at startup
        // end::createTable[]
        Mono.usingWhen(connections.create(), c -> Flux.from(c.createStatement("CREATE TABLE IF NOT EXISTS " + ORDERS
                        + " (id BIGINT PRIMARY KEY, idem_key VARCHAR(255) NOT NULL, item VARCHAR(64) NOT NULL)").execute())
                .concatMap(result -> result.getRowsUpdated()).then(), Connection::close).block(WAIT);
    }

    private Map<String, Long> ordersByKey() {
        return Mono.usingWhen(connections.create(), c -> Flux.from(c.createStatement("SELECT idem_key, COUNT(*) FROM " + ORDERS
                        + " GROUP BY idem_key").execute())
                .concatMap(result -> result.map((row, meta) -> Map.entry(row.get(0, String.class), row.get(1, Long.class))))
                .collectMap(Map.Entry::getKey, Map.Entry::getValue, TreeMap::new), Connection::close)
                .block(WAIT);
    }
}
