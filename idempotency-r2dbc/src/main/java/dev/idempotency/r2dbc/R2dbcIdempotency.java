package dev.idempotency.r2dbc;

import dev.idempotency.AbandonedClaimException;
import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.IdempotentCall;
import dev.idempotency.KeyPolicy;
import dev.idempotency.Outcome;
import dev.idempotency.ResultCodec;
import dev.idempotency.TransactionRequiredException;
import dev.idempotency.internal.TransactionalSteps;
import dev.idempotency.jdbc.dialect.SqlDialect;
import dev.idempotency.jdbc.dialect.TableName;
import dev.idempotency.jdbc.internal.Failures;
import dev.idempotency.spi.Claim;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.R2dbcException;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * The transactional mode on R2DBC: runs a piece of work at most once per key, with the key's record
 * claimed and written in the caller's own R2DBC transaction, atomically with the work's writes, and
 * without blocking a thread. The protocol, its outcomes and its errors are those of
 * {@link dev.idempotency.Idempotency#execute(IdempotentCall, Object, dev.idempotency.Work)}, whose
 * steps it takes from the core; the statements and the claim are the dialect's, as the JDBC store
 * runs them.
 *
 * <pre>{@code
 * Mono.usingWhen(connectionFactory.create(), c -> Mono.from(c.beginTransaction())
 *         .then(engine.execute(IdempotentCall.of(key, fingerprint), c, () -> placeOrder(c)))
 *         .flatMap(outcome -> Mono.from(c.commitTransaction()).thenReturn(outcome)),
 *     Connection::close, (c, e) -> Mono.from(c.rollbackTransaction()).then(Mono.from(c.close())), Connection::close)
 * }</pre>
 *
 * <p>Protocol of the {@link Mono} that {@code execute(call, connection, work)} returns, on each
 * subscription:
 * <ol>
 *   <li>Validate the key against the {@link KeyPolicy}; an invalid key fails with
 *       {@link dev.idempotency.InvalidKeyException} before any statement.</li>
 *   <li>Check the transaction: a connection in auto-commit mode (no transaction begun) fails with
 *       {@link TransactionRequiredException}; nothing is written.</li>
 *   <li>Claim the key in the connection's transaction, as the dialect's claim strategy says. A
 *       committed record answers: {@link Outcome.Replayed} with its result, {@link Outcome.Failed}
 *       with its recorded final failure, {@link Outcome.Mismatch} for another fingerprint (its
 *       {@code value()} throws {@link dev.idempotency.KeyMismatchException}). Another open
 *       transaction holding the key is waited for, up to the policy's lock timeout where the
 *       dialect bounds a statement's wait ({@link SqlDialect#boundedLockWait}; PostgreSQL's claim
 *       bounds its own), else the database's own lock timeout (H2's {@code LOCK_TIMEOUT}); a wait
 *       that runs out is {@link Outcome.InProgress}: roll back (PostgreSQL has aborted the
 *       transaction). The key's own running work calling again with its key fails with
 *       {@link dev.idempotency.NestedKeyException}.</li>
 *   <li>Claimed: subscribe to the work's publisher, which emits the result (at most one element; none
 *       is a {@code null} result). If the policy declares some failures final, a savepoint is taken
 *       before; a final failure is undone to it and recorded. Any other failure of the work releases
 *       the claim and reaches the subscriber unchanged: roll back.</li>
 *   <li>Check the transaction again, encode the result (the call's codec, or a built-in one by its
 *       type), check its size, record it and emit {@link Outcome.Executed}. A failure here releases
 *       the claim too.</li>
 * </ol>
 * The caller commits or rolls back; the engine never does either. The listener hears the outcome,
 * or the error, when the {@code Mono} ends, before the caller's commit, as for the blocking engine.
 *
 * <p><b>Cancelled</b> (the subscriber cancels while the work runs): the engine stops, writes
 * nothing more and tells the listener nothing; the claim stays in the transaction, in progress. Roll
 * the transaction back: then nothing of the key is recorded, and the next attempt runs the work.
 * (Committing it would leave a claim without a result, which later attempts refuse by name with
 * {@link dev.idempotency.AbandonedClaimException}, as they do after a blocking work that ended its
 * transaction.)
 *
 * <p>Not supported yet: chunks, write-last mode, lease mode, purging, the durability check and
 * MariaDB's packet-limit check of the JDBC store, and dialects whose claim strategy is not one of
 * {@code READ_FIRST}, {@code LOCKING_READ_FIRST}, {@code ONE_ROUND_TRIP}.
 *
 * <p>Instances are immutable and thread-safe: build one and share it; each connection is used by
 * one call at a time, as R2DBC requires.
 */
public final class R2dbcIdempotency {

    /** The Reactor context's key under which the keys whose work runs now are kept, each with its connection. */
    private static final Object RUNNING = new Object() {
        @Override
        public String toString() {
            return "idempotency.running";
        }
    };

    private static final String WORK_SAVEPOINT = "idempotency_work";

    private static final String CREATE_TABLE = ", or call createTableIfMissing(connectionFactory) once at startup.";

    private final R2dbcExecutor executor;
    private final TransactionalSteps steps;
    private final KeyPolicy policy;

    private R2dbcIdempotency(Builder b) {
        this.executor = new R2dbcExecutor(b.dialect, b.table);
        this.steps = TransactionalSteps.of(b.policy, b.clock, b.listener);
        this.policy = b.policy;
    }

    /**
     * @param dialect the database's description: {@code new H2Dialect()}, {@code new PostgresDialect()},
     *     {@code new MariaDbDialect()}
     * @return a builder with the default table, key policy, the system clock and no listener
     * @throws NullPointerException if {@code dialect} is null
     */
    public static Builder builder(SqlDialect dialect) {
        return new Builder(dialect);
    }

    /**
     * Runs {@code work} at most once for the call's key, in the transaction that the caller began on
     * {@code connection} (the protocol above), with the call's fingerprint and codec, or a built-in
     * codec chosen by the result's type.
     *
     * @param call the key, fingerprint and codec
     * @param connection the caller's connection, on which it has begun a transaction
     * @param work makes the publisher of the business change, which emits its result (at most one
     *     element); called once the key is claimed, and not at all for a replay
     * @param <T> the result type
     * @return the outcome, on subscription; errors as {@link dev.idempotency.Idempotency#execute(IdempotentCall,
     *     Object, dev.idempotency.Work)} throws them, the work's own unchanged
     */
    public <T> Mono<Outcome<T>> execute(IdempotentCall<T> call, Connection connection, Supplier<? extends Publisher<? extends T>> work) {
        Objects.requireNonNull(call, "call");
        return attempt(call.key(), call.fingerprint(), call.codec().orElse(null), connection, work);
    }

    /**
     * The shortcut of {@link #execute(IdempotentCall, Connection, Supplier)} for
     * {@code IdempotentCall.of(key)}: no fingerprint, a built-in codec chosen by the result's type.
     *
     * @param key the key
     * @param connection the caller's connection, on which it has begun a transaction
     * @param work makes the publisher of the business change, which emits its result (at most one element)
     * @param <T> the result type: {@code String}, {@code byte[]}, {@code Integer}, {@code Long},
     *     {@code Boolean}, {@code UUID}, or none; others need a codec
     * @return the outcome, on subscription
     */
    public <T> Mono<Outcome<T>> execute(IdempotencyKey key, Connection connection, Supplier<? extends Publisher<? extends T>> work) {
        return attempt(key, Fingerprint.NONE, null, connection, work);
    }

    /**
     * Creates the table, its expiry index and the table of named operations if they do not exist,
     * with this engine's dialect ({@link SqlDialect#ddlStatements(TableName)}), on a connection of
     * its own in auto-commit. Opt-in: subscribe once at startup.
     *
     * @param connections where to get the connection
     * @return completes once the statements ran; fails with an
     *     {@link dev.idempotency.IdempotencyStoreException} naming the table if one fails
     */
    public Mono<Void> createTableIfMissing(ConnectionFactory connections) {
        Objects.requireNonNull(connections, "connections");
        List<String> ddl = executor.dialect().ddlStatements(executor.table()); // read now: a resource read blocks
        return Mono.usingWhen(connections.create(), c -> Flux.fromIterable(ddl)
                        .concatMap(sql -> Flux.from(c.createStatement(sql).execute()).concatMap(result -> result.getRowsUpdated()))
                        .then(), Connection::close)
                .onErrorMap(R2dbcException.class, e -> new IdempotencyStoreException(null, "could not create table '"
                        + executor.table() + "'", e));
    }

    /** @return the key policy */
    public KeyPolicy keyPolicy() {
        return policy;
    }

    /** @return the dialect the statements are read from */
    public SqlDialect dialect() {
        return executor.dialect();
    }

    /** @return the table of the records */
    public TableName table() {
        return executor.table();
    }

    private <T> Mono<Outcome<T>> attempt(IdempotencyKey key, Fingerprint fingerprint, @Nullable ResultCodec<T> codec,
                                         Connection connection, Supplier<? extends Publisher<? extends T>> work) {
        Objects.requireNonNull(key, "key");
        return Mono.defer(() -> {
            long started = System.nanoTime();
            return Mono.defer(() -> {
                steps.validate(key);
                Objects.requireNonNull(connection, "connection");
                Objects.requireNonNull(work, "work");
                checkTransaction(connection, key, "nothing was written");
                return store(key, "claim the key", executor.claim(connection, steps.claimRequest(key, fingerprint)))
                        .flatMap(claim -> claim instanceof Claim.Acquired ? runClaimed(key, codec, connection, work)
                                : Mono.deferContextual(context -> Mono.just(answer(key, fingerprint, codec, connection, claim, context))));
            }).doOnNext(outcome -> steps.heard(key, outcome, started)).doOnError(e -> steps.heardError(key, e, started));
        });
    }

    private <T> Outcome<T> answer(IdempotencyKey key, Fingerprint fingerprint, @Nullable ResultCodec<T> codec, Connection connection,
                                  Claim claim, ContextView context) {
        if (steps.mayBeOwnClaim(claim, fingerprint) && runsIn(context, connection, key)) {
            throw steps.nested(key); // its claim is this transaction's own: it would look committed and abandoned
        }
        return steps.outcomeOf(key, fingerprint, codec, claim);
    }

    /** Runs the work for a claimed key and records its result; every failure but a final one releases the claim. */
    private <T> Mono<Outcome<T>> runClaimed(IdempotencyKey key, @Nullable ResultCodec<T> codec, Connection c,
                                            Supplier<? extends Publisher<? extends T>> work) {
        boolean savepoint = steps.hasFinalFailures();
        Mono<Void> mark = savepoint ? store(key, "set a savepoint, needed to undo the work of a final failure",
                Mono.from(c.createSavepoint(WORK_SAVEPOINT))) : Mono.empty();
        Mono<Ran<T>> ran = Mono.defer(() -> Flux.<T>from(work.get()).collectList())
                .contextWrite(context -> running(context, c, key))
                .map(Ran::<T>of)
                .onErrorResume(failure -> Mono.just(new Ran<>(null, 0, failure)));
        return mark.onErrorResume(e -> releasing(c, key, e))
                .then(ran)
                .flatMap(result -> result.failure != null ? failed(key, c, savepoint, result.failure) : executed(key, codec, c, savepoint, result));
    }

    /** The work's result, or its failure. */
    private record Ran<T>(@Nullable T value, int elements, @Nullable Throwable failure) {
        static <T> Ran<T> of(List<T> emitted) {
            return new Ran<>(emitted.isEmpty() ? null : emitted.get(0), emitted.size(), null);
        }
    }

    private <T> Mono<Outcome<T>> executed(IdempotencyKey key, @Nullable ResultCodec<T> codec, Connection c, boolean savepoint,
                                          Ran<T> result) {
        return Mono.defer(() -> {
            if (result.elements > 1) {
                throw new IllegalArgumentException("the work's publisher emitted " + result.elements + " elements, but a work has"
                        + " one result: emit at most one (a Mono). The claim was released: roll back the transaction to undo the"
                        + " work's writes");
            }
            checkTransactionAfterWork(c, key);
            TransactionalSteps.Recorded<T> executed = steps.executed(key, codec, result.value);
            Mono<Void> unmark = savepoint ? Mono.from(c.releaseSavepoint(WORK_SAVEPOINT)) : Mono.empty();
            return store(key, "record the result", unmark.then(executor.complete(c, executed.completion())))
                    .thenReturn(executed.outcome());
        }).onErrorResume(e -> e instanceof AbandonedClaimException ? Mono.error(e) : releasing(c, key, e));
    }

    private <T> Mono<Outcome<T>> failed(IdempotencyKey key, Connection c, boolean savepoint, Throwable failure) {
        if (savepoint && failure instanceof Exception e && steps.isFinal(e)) {
            return Mono.defer(() -> {
                TransactionalSteps.Recorded<T> failed = steps.failed(key, e);
                return store(key, "record the final failure", Mono.from(c.rollbackTransactionToSavepoint(WORK_SAVEPOINT))
                        .then(executor.complete(c, failed.completion())))
                        .thenReturn(failed.outcome());
            }).onErrorResume(recording -> {
                recording.addSuppressed(e);
                return releasing(c, key, recording);
            });
        }
        return releasing(c, key, failure);
    }

    /** Releases the claim after {@code failure}, which then reaches the subscriber; a failure to release is attached to it. */
    private <T> Mono<T> releasing(Connection c, IdempotencyKey key, Throwable failure) {
        return executor.release(c, key)
                .onErrorResume(releaseFailure -> {
                    failure.addSuppressed(releaseFailure);
                    return Mono.empty();
                })
                .then(Mono.error(failure));
    }

    private void checkTransaction(Connection c, IdempotencyKey key, String aftermath) {
        if (c.isAutoCommit()) {
            throw new TransactionRequiredException(key, "the connection is in auto-commit mode (no transaction was begun on it),"
                    + " so the key's record could not be committed atomically with your change; call beginTransaction(),"
                    + " run execute, then commitTransaction(). " + Character.toUpperCase(aftermath.charAt(0)) + aftermath.substring(1));
        }
    }

    private void checkTransactionAfterWork(Connection c, IdempotencyKey key) {
        try {
            checkTransaction(c, key, "the work ended the transaction");
        } catch (TransactionRequiredException ended) {
            throw steps.abandonedByWork(key, ended);
        }
    }

    /** @return {@code statements}, their driver failures read as the store's failures by the dialect */
    private <T> Mono<T> store(IdempotencyKey key, String what, Mono<T> statements) {
        return statements.onErrorMap(R2dbcException.class, e -> Failures.of(executor.table(), executor.dialect(), false, CREATE_TABLE,
                key, what, R2dbcExecutor.error(e), e));
    }

    private static Context running(Context context, Connection c, IdempotencyKey key) {
        List<Running> running = context.<List<Running>>getOrEmpty(RUNNING).orElse(List.of());
        List<Running> more = new ArrayList<>(running);
        more.add(new Running(c, key));
        return context.put(RUNNING, List.copyOf(more));
    }

    /** @return whether the key's own work runs now, in the transaction of {@code c}, in the subscriber's context */
    private static boolean runsIn(ContextView context, Connection c, IdempotencyKey key) {
        Optional<List<Running>> running = context.getOrEmpty(RUNNING);
        return running.isPresent() && running.get().stream().anyMatch(r -> r.connection == c && r.key.equals(key));
    }

    /** A key whose work runs now, on connection {@code connection} (compared by identity). */
    private record Running(Connection connection, IdempotencyKey key) {
    }

    @Override
    public String toString() {
        return "R2dbcIdempotency[" + executor + ", policy=" + policy + "]";
    }

    /** Builds an {@link R2dbcIdempotency}. Not thread-safe; what it builds is. */
    public static final class Builder {
        private final SqlDialect dialect;
        private TableName table = TableName.DEFAULT;
        private KeyPolicy policy = KeyPolicy.ofDefaults();
        private InstantSource clock = InstantSource.system();
        private IdempotencyListener listener = IdempotencyListener.NONE;

        private Builder(SqlDialect dialect) {
            this.dialect = Objects.requireNonNull(dialect, "dialect");
        }

        /**
         * @param table the table of the records, created with {@link SqlDialect#ddl(TableName)}
         * @return this builder
         */
        public Builder table(TableName table) {
            this.table = Objects.requireNonNull(table, "table");
            return this;
        }

        /**
         * @param policy key rules, retention, lock timeout, result size limit and final failures
         * @return this builder
         */
        public Builder keyPolicy(KeyPolicy policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /**
         * @param clock the source of the current time
         * @return this builder
         */
        public Builder clock(InstantSource clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * @param listener told about every outcome and error
         * @return this builder
         */
        public Builder listener(IdempotencyListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * @return the engine
         * @throws IllegalArgumentException if the dialect's claim strategy is not one the engine runs
         */
        public R2dbcIdempotency build() {
            return new R2dbcIdempotency(this);
        }
    }
}
