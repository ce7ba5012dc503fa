package dev.idempotency.r2dbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.KeyPolicy;
import dev.idempotency.Outcome;
import dev.idempotency.jdbc.dialect.H2Dialect;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The example of docs/reactive.md, compiled and run on H2: an order placed once per key, in the
 * caller's R2DBC transaction, from whatever calls it (a WebFlux handler, a message listener).
 */
class ReactiveExampleTest {

    // tag::engine[]
    R2dbcIdempotency engine = R2dbcIdempotency.builder(new H2Dialect())
            .table(R2dbcDatabase.TABLE)
            .keyPolicy(KeyPolicy.builder().lockTimeout(Duration.ofSeconds(2)).build())
            .build();
    // end::engine[]

    // tag::execute[]
    Mono<Outcome<String>> placeOrder(ConnectionFactory connections, IdempotencyKey key, String order) {
        IdempotentCall<String> call = IdempotentCall.of(key, Fingerprint.of(order));
        return Mono.usingWhen(connections.create(),
                c -> Mono.from(c.beginTransaction())
                        .then(engine.execute(call, c, () -> insertOrder(c, order)))
                        .flatMap(outcome -> Mono.from(outcome instanceof Outcome.InProgress
                                ? c.rollbackTransaction() : c.commitTransaction()).thenReturn(outcome)),
                Connection::close,
                (c, failure) -> Mono.from(c.rollbackTransaction()).then(Mono.from(c.close())),
                Connection::close);
    }
    // end::execute[]

    private static Mono<String> insertOrder(Connection c, String order) {
        return Flux.from(c.createStatement("SELECT CAST($1 AS VARCHAR)").bind(0, "order " + order).execute())
                .concatMap(result -> result.map((row, meta) -> row.get(0, String.class)))
                .next();
    }

    @Test
    void anOrderIsPlacedOnceAndItsRetryReplaysIt() {
        ConnectionFactory connections = R2dbcDatabase.H2.factory();
        IdempotencyKey key = IdempotencyKey.of("orders", UUID.randomUUID().toString());
        Outcome<String> first = placeOrder(connections, key, "3 books").block(Duration.ofSeconds(30));
        Outcome<String> retry = placeOrder(connections, key, "3 books").block(Duration.ofSeconds(30));
        Outcome<String> other = placeOrder(connections, key, "1 pen").block(Duration.ofSeconds(30));
        assertThat(first).isInstanceOf(Outcome.Executed.class);
        assertThat(retry).isInstanceOf(Outcome.Replayed.class);
        assertThat(retry.value()).isEqualTo("order 3 books");
        assertThat(other).isInstanceOf(Outcome.Mismatch.class);
    }
}
