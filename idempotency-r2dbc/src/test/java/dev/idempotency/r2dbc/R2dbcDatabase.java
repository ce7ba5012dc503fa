package dev.idempotency.r2dbc;

import dev.idempotency.jdbc.dialect.H2Dialect;
import dev.idempotency.jdbc.dialect.MariaDbDialect;
import dev.idempotency.jdbc.dialect.PostgresDialect;
import dev.idempotency.jdbc.dialect.SqlDialect;
import dev.idempotency.jdbc.dialect.TableName;
import dev.idempotency.testsupport.DatabaseServer;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryOptions;
import io.r2dbc.spi.IsolationLevel;
import java.time.Duration;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * One database the R2DBC engine's tests run on, with every fact about it they ask, stated once: its
 * dialect, how to reach it (a server of the environment through {@link DatabaseServer}, whose JDBC
 * URL becomes the R2DBC one; an absent server skips the test, or fails it under CI), and how its
 * lock waits are bounded. Each constant creates the engine's table once, {@link #TABLE}, from the
 * dialect's DDL.
 */
enum R2dbcDatabase {

    /**
     * Embedded in-memory H2 through r2dbc-h2, which runs each statement on the subscribing thread:
     * its statements are kept off Reactor's non-blocking threads ({@link #offEventLoop}). Neither
     * its driver (whose {@code setLockWaitTimeout} does nothing) nor the dialect bounds a wait: the
     * session's {@code LOCK_TIMEOUT} does ({@link #boundLockWaits}).
     */
    H2(new H2Dialect(), false, () -> ConnectionFactories.get("r2dbc:h2:mem:///r2dbc-engine?options=DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000")),

    /** The PostgreSQL server of the environment, through r2dbc-postgresql; a lock wait that runs out aborts the transaction. */
    POSTGRES(new PostgresDialect(), true, () -> server(DatabaseServer.postgres())),

    /** The MariaDB server of the environment, through r2dbc-mariadb; waits bounded by {@code max_statement_time}. */
    MARIADB(new MariaDbDialect(), true, () -> server(DatabaseServer.mariadb()));

    /** The table of this module's tests: a name of its own, so that other modules' suites on the same servers never meet it. */
    static final TableName TABLE = TableName.of("r2dbc_engine_record");

    private final SqlDialect dialect;
    private final boolean nonBlockingDriver;
    private final Supplier<ConnectionFactory> opener;
    private ConnectionFactory factory;

    R2dbcDatabase(SqlDialect dialect, boolean nonBlockingDriver, Supplier<ConnectionFactory> opener) {
        this.dialect = dialect;
        this.nonBlockingDriver = nonBlockingDriver;
        this.opener = opener;
    }

    private static ConnectionFactory server(DatabaseServer server) {
        ConnectionFactoryOptions options = ConnectionFactoryOptions.parse("r2dbc:" + server.url().substring("jdbc:".length()))
                .mutate()
                .option(ConnectionFactoryOptions.USER, server.user())
                .option(ConnectionFactoryOptions.PASSWORD, server.password())
                .build();
        return ConnectionFactories.get(options);
    }

    SqlDialect dialect() {
        return dialect;
    }

    /** @return whether the driver's I/O is non-blocking (a server's), so that the engine's steps run on its event loop */
    boolean nonBlockingDriver() {
        return nonBlockingDriver;
    }

    /** @return the connection factory, the table created on first use */
    synchronized ConnectionFactory factory() {
        if (factory == null) {
            ConnectionFactory opened = opener.get();
            R2dbcIdempotency.builder(dialect).table(TABLE).build().createTableIfMissing(opened).block(Duration.ofSeconds(30));
            factory = opened;
        }
        return factory;
    }

    /**
     * Runs {@code body} in a transaction of a new connection, then commits it, or rolls it back if
     * {@code commit} says no for the result; rolls back if the body fails.
     */
    <T> Mono<T> inTransaction(Function<Connection, Mono<T>> body, java.util.function.Predicate<? super T> commit) {
        return inTransaction(null, body, commit);
    }

    /** As {@link #inTransaction(Function, java.util.function.Predicate)}, at {@code isolation} if not null (else the driver's default). */
    <T> Mono<T> inTransaction(@Nullable IsolationLevel isolation, Function<Connection, Mono<T>> body,
                              java.util.function.Predicate<? super T> commit) {
        return Mono.usingWhen(factory().create(), c -> (isolation == null ? Mono.<Void>empty() : Mono.from(c.setTransactionIsolationLevel(isolation)))
                        .then(Mono.from(c.beginTransaction()))
                        .then(Mono.defer(() -> body.apply(c)))
                        .flatMap(result -> Mono.from(commit.test(result) ? c.commitTransaction() : c.rollbackTransaction()).thenReturn(result)),
                Connection::close,
                // Only while the transaction is open: after the server aborted it (MariaDB's deadlock victim),
                // r2dbc-mariadb 1.4.2's rollbackTransaction() returns without releasing a lock of its
                // connection factory, and the factory's next commit or rollback fails.
                (c, failure) -> (c.isAutoCommit() ? Mono.<Void>empty() : Mono.defer(() -> Mono.from(c.rollbackTransaction())))
                        .onErrorResume(e -> Mono.empty()).then(Mono.from(c.close())),
                Connection::close);
    }

    /** @return {@code work} continued off Reactor's non-blocking threads where the driver runs statements on the calling thread (H2's) */
    <T> Mono<T> offEventLoop(Mono<T> work) {
        return nonBlockingDriver ? work : work.publishOn(Schedulers.boundedElastic());
    }

    /** Bounds this connection's lock waits by {@code timeout} where neither the driver nor the dialect can: H2's session setting. */
    Mono<Void> boundLockWaits(Connection c, Duration timeout) {
        if (this != H2) {
            return Mono.empty();
        }
        return Flux.from(c.createStatement("SET LOCK_TIMEOUT " + timeout.toMillis()).execute()).concatMap(r -> r.getRowsUpdated()).then();
    }
}
