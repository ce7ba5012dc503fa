package dev.idempotency.spring.webflux;

import dev.idempotency.jdbc.dialect.H2Dialect;
import dev.idempotency.jdbc.dialect.PostgresDialect;
import dev.idempotency.jdbc.dialect.SqlDialect;
import dev.idempotency.jdbc.dialect.TableName;
import dev.idempotency.r2dbc.R2dbcIdempotency;
import dev.idempotency.testsupport.DatabaseServer;
import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryOptions;
import java.time.Duration;
import java.util.function.Supplier;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A database the WebFlux tests run on: its dialect, how to reach it, and whether its driver runs
 * statements on the subscribing thread (r2dbc-h2 does, so that the test server moves each request
 * off Reactor Netty's event loop). Each constant creates the records' table and the payments' table once,
 * and pools its connections.
 */
enum WebFluxDatabase {

    /** Embedded H2 through r2dbc-h2; a lock wait runs out after the session's {@code LOCK_TIMEOUT}, 1 second. */
    H2(new H2Dialect(), true, () -> ConnectionFactories.get("r2dbc:h2:mem:///webflux?options=DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=1000")),

    /** The PostgreSQL server of the environment, through r2dbc-postgresql; the policy's lock timeout bounds a wait. */
    POSTGRES(new PostgresDialect(), false, () -> {
        DatabaseServer server = DatabaseServer.postgres();
        return ConnectionFactories.get(ConnectionFactoryOptions.parse("r2dbc:" + server.url().substring("jdbc:".length())).mutate()
                .option(ConnectionFactoryOptions.USER, server.user())
                .option(ConnectionFactoryOptions.PASSWORD, server.password())
                .build());
    });

    /** The records' table of these tests: a name of their own, apart from other modules' suites on the same server. */
    static final TableName TABLE = TableName.of("webflux_record");
    /** The handler's own writes. */
    static final String PAYMENTS = "webflux_payment";

    private final SqlDialect dialect;
    private final boolean blockingDriver;
    private final Supplier<ConnectionFactory> opener;
    private ConnectionFactory factory;

    WebFluxDatabase(SqlDialect dialect, boolean blockingDriver, Supplier<ConnectionFactory> opener) {
        this.dialect = dialect;
        this.blockingDriver = blockingDriver;
        this.opener = opener;
    }

    SqlDialect dialect() {
        return dialect;
    }

    boolean blockingDriver() {
        return blockingDriver;
    }

    /** @return the connection factory, the tables created on first use */
    synchronized ConnectionFactory factory() {
        if (factory == null) {
            ConnectionFactory opened = opener.get();
            R2dbcIdempotency.builder(dialect).table(TABLE).build().createTableIfMissing(opened)
                    .then(Mono.usingWhen(opened.create(), c -> Flux.from(c.createStatement("CREATE TABLE IF NOT EXISTS " + PAYMENTS
                            + " (client VARCHAR(64) NOT NULL, idem_key VARCHAR(255) NOT NULL, note VARCHAR(255))").execute())
                            .concatMap(r -> r.getRowsUpdated()).then(), Connection::close))
                    .block(Duration.ofSeconds(30));
            factory = new ConnectionPool(ConnectionPoolConfiguration.builder(opened).initialSize(2).maxSize(16).build());
        }
        return factory;
    }

    /** @return the number of payments committed for each of the client's keys */
    java.util.Map<String, Long> paymentsByKey(String client) {
        return Mono.usingWhen(factory().create(), c -> Flux.from(c.createStatement("SELECT idem_key, COUNT(*) FROM " + PAYMENTS
                        + " WHERE client = $1 GROUP BY idem_key").bind("$1", client).execute())
                .flatMap(r -> r.map((row, meta) -> java.util.Map.entry(row.get(0, String.class), row.get(1, Long.class))))
                .collectMap(java.util.Map.Entry::getKey, java.util.Map.Entry::getValue), Connection::close)
                .block(Duration.ofSeconds(30));
    }

    /** @return the payments committed for the client's key */
    long payments(String client, String key) {
        return Mono.usingWhen(factory().create(), c -> Mono.from(c.createStatement("SELECT COUNT(*) FROM " + PAYMENTS
                        + " WHERE client = $1 AND idem_key = $2").bind("$1", client).bind("$2", key).execute())
                .flatMap(r -> Mono.from(r.map((row, meta) -> row.get(0, Long.class)))), Connection::close)
                .block(Duration.ofSeconds(30));
    }
}
