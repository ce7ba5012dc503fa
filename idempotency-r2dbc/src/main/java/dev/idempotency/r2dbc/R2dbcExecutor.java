package dev.idempotency.r2dbc;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.jdbc.dialect.ClaimStrategy;
import dev.idempotency.jdbc.dialect.SqlDialect;
import dev.idempotency.jdbc.dialect.SqlError;
import dev.idempotency.jdbc.dialect.TableName;
import dev.idempotency.jdbc.internal.ClaimRounds;
import dev.idempotency.jdbc.internal.Failures;
import dev.idempotency.jdbc.internal.Statements;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.StoredRecord;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.IsolationLevel;
import io.r2dbc.spi.R2dbcException;
import io.r2dbc.spi.R2dbcNonTransientResourceException;
import io.r2dbc.spi.R2dbcRollbackException;
import io.r2dbc.spi.R2dbcTimeoutException;
import io.r2dbc.spi.Result;
import io.r2dbc.spi.Row;
import io.r2dbc.spi.Statement;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.IntFunction;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The R2DBC executor: runs the transactional mode's statements on one database as its
 * {@link SqlDialect} describes it, the same descriptions that the JDBC executor reads (the claim
 * strategy, the dialect's SQL texts and the shared ones of {@code Statements}, its error
 * classification), without blocking. Placeholders are translated by {@link Placeholders}; a
 * driver's {@link R2dbcException} is read as a {@link SqlError} for the dialect's questions.
 *
 * <p>Runs the claim strategies {@link ClaimStrategy#READ_FIRST} (H2), {@link ClaimStrategy#LOCKING_READ_FIRST}
 * (MariaDB) and {@link ClaimStrategy#ONE_ROUND_TRIP} (PostgreSQL, its statements sent one after the
 * other: a driver binds parameters into one statement only). A statement that may wait for a lock
 * is bounded as {@link SqlDialect#boundedLockWait} says, else by the database's own lock timeout.
 *
 * <p>Immutable and thread-safe; one connection is used by one call at a time.
 */
final class R2dbcExecutor {

    /** The claim strategies this executor runs. */
    static final Set<ClaimStrategy> STRATEGIES = EnumSet.of(ClaimStrategy.READ_FIRST, ClaimStrategy.LOCKING_READ_FIRST,
            ClaimStrategy.ONE_ROUND_TRIP);

    private static final String CLAIM_SAVEPOINT = "idempotency_claim";

    private final SqlDialect dialect;
    private final TableName table;

    R2dbcExecutor(SqlDialect dialect, TableName table) {
        if (!STRATEGIES.contains(dialect.claimStrategy())) {
            throw new IllegalArgumentException("the " + dialect.name() + " dialect claims with " + dialect.claimStrategy()
                    + ", which the R2DBC engine does not run; it runs " + STRATEGIES + " (H2, PostgreSQL, MariaDB)");
        }
        this.dialect = dialect;
        this.table = table;
    }

    SqlDialect dialect() {
        return dialect;
    }

    TableName table() {
        return table;
    }

    /** @return the driver's failure as the dialects read it */
    static SqlError error(R2dbcException e) {
        return new SqlError(e.getSqlState(), e.getErrorCode(), e.getMessage(), e instanceof R2dbcTimeoutException);
    }

    // ---- the claim ---------------------------------------------------------------------------------

    /** Claims the key, or finds its record, in the dialect's claim strategy. */
    Mono<Claim> claim(Connection c, ClaimRequest r) {
        Optional<String> refusal = dialect.keyRefusal(r.key());
        if (refusal.isPresent()) {
            return Mono.error(new R2dbcNonTransientResourceException(refusal.get(), "22023"));
        }
        switch (dialect.claimStrategy()) {
            case ONE_ROUND_TRIP:
                return inOneRoundTrip(c, r);
            case LOCKING_READ_FIRST:
                return busyOnLockTimeout(lockingReadFirst(c, r), Claim.busy());
            default:
                return readingFirst(c, r);
        }
    }

    /**
     * Read the record, then insert it or take it over; a duplicate on insert means read again. Under
     * READ UNCOMMITTED a record the plain read found may be another transaction's uncommitted row:
     * it is read again with the exclusive locking read, which waits for that transaction and reads
     * the committed record, as the JDBC executor's {@code Claims} explains it.
     */
    private Mono<Claim> readingFirst(Connection c, ClaimRequest r) {
        return rounds(ClaimRounds.KEPT_CHANGING_IN_SNAPSHOT, round -> select(c, r, "", false)
                .flatMap(found -> found.isPresent() && readsUncommitted(c)
                        ? busyOnLockTimeout(select(c, r, dialect.lockingRead(true), true)
                                .flatMap(committed -> decide(c, r, committed, write -> write)), Optional.of(Claim.busy()))
                        : decide(c, r, found, write -> busyOnLockTimeout(write, Optional.of(Claim.busy())))));
    }

    /**
     * {@link ClaimStrategy#LOCKING_READ_FIRST}, as the JDBC executor's {@code Claims} explains it: under
     * READ COMMITTED and READ UNCOMMITTED a first read that finds nothing, and under READ UNCOMMITTED
     * one that finds a record (maybe uncommitted), is followed by an exclusive locking read; a lock
     * timeout anywhere is busy.
     */
    private Mono<Claim> lockingReadFirst(Connection c, ClaimRequest r) {
        return rounds(ClaimRounds.KEPT_CHANGING, round -> select(c, r, round > 0 ? dialect.lockingRead(false) : "", true)
                .flatMap(found -> round == 0 && (found.isEmpty() ? waitsInALockingRead(c) : readsUncommitted(c))
                        ? select(c, r, dialect.lockingRead(true), true) : Mono.just(found))
                .flatMap(found -> decide(c, r, found, write -> write)));
    }

    private static boolean waitsInALockingRead(Connection c) {
        IsolationLevel level = c.getTransactionIsolationLevel();
        return IsolationLevel.READ_COMMITTED.equals(level) || IsolationLevel.READ_UNCOMMITTED.equals(level);
    }

    /** @return whether the transaction is at READ UNCOMMITTED, where a plain read can return another transaction's uncommitted record */
    private static boolean readsUncommitted(Connection c) {
        return IsolationLevel.READ_UNCOMMITTED.equals(c.getTransactionIsolationLevel());
    }

    /**
     * {@link ClaimStrategy#ONE_ROUND_TRIP}: the dialect's statements one after the other, the last
     * always run (PostgreSQL's sets the caller's lock timeout back), their parameters in order.
     */
    private Mono<Claim> inOneRoundTrip(Connection c, ClaimRequest r) {
        String sql = dialect.claimStatement(table, r.lockTimeout());
        List<String> statements = sql == null ? List.of() : Placeholders.statements(sql);
        if (statements.size() != 3) {
            return Mono.error(new IllegalStateException("the " + dialect.name() + " dialect's claimStatement() must be three"
                    + " statements (a query, the insert, the read of the record), not " + statements.size()));
        }
        List<Object> parameters = new ArrayList<>(claimParameters(r));
        parameters.add(r.key().scope());
        parameters.add(r.key().id());
        int first = Placeholders.count(statements.get(0));
        int second = first + Placeholders.count(statements.get(1));
        return rounds(ClaimRounds.KEPT_CHANGING, round -> busyOnLockTimeout(rowsUpdated(c, statements.get(0), parameters.subList(0, first))
                        .then(rowsUpdated(c, statements.get(1), parameters.subList(first, second)))
                        .flatMap(inserted -> query(c, statements.get(2), parameters.subList(second, parameters.size()), 1)
                                .flatMap(found -> inserted == 1 ? Mono.just(Optional.of(Claim.acquired()))
                                        : found.isEmpty() ? Mono.just(Optional.<Claim>empty()) // purged meanwhile: look again
                                        : decide(c, r, found, write -> write))), Optional.of(Claim.busy())));
    }

    /**
     * A round's decision on what it read: an unexpired record is existing; an absent one is
     * inserted, an expired one taken over, each {@code bounded} as the strategy says; empty if the
     * record changed under the round.
     */
    private Mono<Optional<Claim>> decide(Connection c, ClaimRequest r, Optional<Found> found,
                                         UnaryOperator<Mono<Optional<Claim>>> bounded) {
        if (found.isEmpty()) {
            return bounded.apply(insertClaim(c, r).map(claimed -> claimed ? Optional.of(Claim.acquired()) : Optional.empty()));
        }
        Found row = found.get();
        return judgedBy(c, row, r).flatMap(leaseNow -> {
            if (row.record().expiresAt().isAfter(row.leaseWritten() ? leaseNow : r.now())) {
                return Mono.just(Optional.of(Claim.existing(row.record())));
            }
            return bounded.apply(takeOver(c, r, leaseNow).map(claimed -> claimed ? Optional.of(Claim.acquired()) : Optional.empty()));
        });
    }

    /** The clock rule of the JDBC executor: a record lease mode wrote is judged by the database's now. */
    private Mono<Instant> judgedBy(Connection c, Found found, ClaimRequest r) {
        return found.leaseWritten() ? databaseNow(c) : Mono.just(r.now());
    }

    /** Runs rounds until one decides the claim, at most {@link ClaimRounds#ROUNDS}; then a conflict (40001). */
    private static Mono<Claim> rounds(String keptChanging, IntFunction<Mono<Optional<Claim>>> round) {
        return round(keptChanging, round, 0);
    }

    private static Mono<Claim> round(String keptChanging, IntFunction<Mono<Optional<Claim>>> round, int i) {
        if (i == ClaimRounds.ROUNDS) {
            return Mono.error(new R2dbcRollbackException(keptChanging, "40001"));
        }
        return round.apply(i).flatMap(decided -> decided.map(Mono::just).orElseGet(() -> round(keptChanging, round, i + 1)));
    }

    /** @return {@code step}, answering {@code busy} if its lock wait ran out */
    private <T> Mono<T> busyOnLockTimeout(Mono<T> step, T busy) {
        return step.onErrorResume(R2dbcException.class, e -> dialect.isLockTimeout(error(e)) ? Mono.just(busy) : Mono.error(e));
    }

    /** Inserts an in-progress record; {@code false} if the key has one. Under a savepoint where a failed statement aborts the transaction. */
    private Mono<Boolean> insertClaim(Connection c, ClaimRequest r) {
        Mono<Boolean> insert = rowsUpdated(c, bounded(dialect.claimInsert(table), r), claimParameters(r)).map(rows -> rows == 1);
        if (dialect.failedStatementAbortsTransaction()) {
            insert = Mono.from(c.createSavepoint(CLAIM_SAVEPOINT))
                    .then(insert)
                    .onErrorResume(R2dbcException.class, e -> Mono.from(c.rollbackTransactionToSavepoint(CLAIM_SAVEPOINT))
                            .then(Mono.error(e)))
                    .flatMap(inserted -> Mono.from(c.releaseSavepoint(CLAIM_SAVEPOINT)).thenReturn(inserted));
        }
        return insert.onErrorResume(R2dbcException.class, e -> dialect.isDuplicateKey(error(e)) ? Mono.just(false) : Mono.error(e));
    }

    /** Takes over an expired record; {@code false} if it is no longer expired. */
    private Mono<Boolean> takeOver(Connection c, ClaimRequest r, Instant leaseNow) {
        return rowsUpdated(c, bounded(Statements.takeOver(table), r), List.of(r.fingerprint().value(), RecordStatus.IN_PROGRESS.name(),
                r.now().toEpochMilli(), r.expiresAt().toEpochMilli(), r.key().scope(), r.key().id(), r.now().toEpochMilli(),
                leaseNow.toEpochMilli())).map(rows -> rows == 1);
    }

    /** Reads the key's record with {@code lock} appended; bounded if the read may wait. */
    private Mono<Optional<Found>> select(Connection c, ClaimRequest r, String lock, boolean mayWait) {
        String sql = Statements.select(table, lock);
        return query(c, mayWait ? bounded(sql, r) : sql, List.of(r.key().scope(), r.key().id()), 0);
    }

    private String bounded(String sql, ClaimRequest r) {
        String bounded = dialect.boundedLockWait(sql, r.lockTimeout());
        return bounded != null ? bounded : sql;
    }

    private static List<Object> claimParameters(ClaimRequest r) {
        return List.of(r.key().scope(), r.key().id(), r.fingerprint().value(), RecordStatus.IN_PROGRESS.name(),
                r.now().toEpochMilli(), r.expiresAt().toEpochMilli());
    }

    // ---- completion, release, the database's clock ----------------------------------------------------

    /** Records the completion; fails if the claimed record is gone. */
    Mono<Void> complete(Connection c, Completion done) {
        return rowsUpdated(c, Statements.completion(table), Arrays.asList(done.status().name(), done.codec(), done.result(),
                done.completedAt().toEpochMilli(), done.expiresAt().toEpochMilli(), done.key().scope(), done.key().id()))
                .flatMap(rows -> rows == 1 ? Mono.<Void>empty() : Mono.error(Failures.recordMissing(table, done.key(), rows)));
    }

    /** Deletes this transaction's in-progress claim. */
    Mono<Void> release(Connection c, IdempotencyKey key) {
        return rowsUpdated(c, Statements.release(table), List.of(key.scope(), key.id(), RecordStatus.IN_PROGRESS.name())).then();
    }

    /** @return the database's current time, to the millisecond ({@link SqlDialect#currentTimeMillisQuery()}) */
    Mono<Instant> databaseNow(Connection c) {
        String query = dialect.currentTimeMillisQuery();
        Statement s = c.createStatement(query != null ? query : "SELECT CURRENT_TIMESTAMP");
        return Flux.from(s.execute())
                .concatMap(result -> result.map((row, meta) -> query != null ? Instant.ofEpochMilli(number(row.get(0)))
                        : row.get(0, OffsetDateTime.class).toInstant().truncatedTo(ChronoUnit.MILLIS)))
                .next();
    }

    // ---- statements ------------------------------------------------------------------------------------

    /** Runs {@code sql} with {@code parameters}; the rows it updated, summed over its results. */
    private static Mono<Long> rowsUpdated(Connection c, String sql, List<?> parameters) {
        return Flux.from(statement(c, sql, parameters).execute())
                .concatMap(Result::getRowsUpdated)
                .reduce(0L, Long::sum);
    }

    /** Runs a query; its first row's record from column {@code first}, if the row has one (its scope is not null). */
    private static Mono<Optional<Found>> query(Connection c, String sql, List<?> parameters, int first) {
        return Flux.from(statement(c, sql, parameters).execute())
                .concatMap(result -> result.map((row, meta) -> Optional.ofNullable(row.get(first) == null ? null : row(row, first))))
                .collectList()
                .map(rows -> rows.isEmpty() ? Optional.empty() : rows.get(0));
    }

    private static Statement statement(Connection c, String sql, List<?> parameters) {
        Statement s = c.createStatement(Placeholders.of(c).translate(sql));
        for (int i = 0; i < parameters.size(); i++) {
            Object value = parameters.get(i);
            if (value == null) {
                s.bindNull(i, byte[].class); // only a result is ever null
            } else {
                s.bind(i, value);
            }
        }
        return s;
    }

    /**
     * A record as read, and whether lease mode wrote it (its owner token is set).
     *
     * @param record the record
     * @param leaseWritten whether lease mode wrote it
     */
    record Found(StoredRecord record, boolean leaseWritten) {
    }

    /** Reads a record from column {@code first} in {@link SqlDialect#COLUMNS} order. */
    private static Found row(Row row, int first) {
        IdempotencyKey key = IdempotencyKey.of(text(row.get(first)), text(row.get(first + 1)));
        Object completed = row.get(first + 7);
        Object lease = row.get(first + 9);
        StoredRecord record = new StoredRecord(key, Fingerprint.fromValue(text(row.get(first + 2))),
                RecordStatus.valueOf(text(row.get(first + 3))), nullableText(row.get(first + 4)), row.get(first + 5, byte[].class),
                Instant.ofEpochMilli(number(row.get(first + 6))), completed == null ? null : Instant.ofEpochMilli(number(completed)),
                Instant.ofEpochMilli(number(row.get(first + 8))), lease == null ? null : Instant.ofEpochMilli(number(lease)));
        return new Found(record, row.get(first + 10) != null);
    }

    /** A column as text: drivers give a {@code VARBINARY} (MariaDB's scope and key id) as bytes. */
    private static String text(@Nullable Object value) {
        String text = nullableText(value);
        if (text == null) {
            throw new IllegalArgumentException("a column that is never null was null");
        }
        return text;
    }

    private static @Nullable String nullableText(@Nullable Object value) {
        byte[] bytes = value instanceof String ? null : bytes(value);
        return bytes != null ? new String(bytes, StandardCharsets.UTF_8) : (String) value;
    }

    private static byte @Nullable [] bytes(@Nullable Object value) {
        if (value == null) {
            return null;
        }
        if (value instanceof byte[] bytes) {
            return bytes;
        }
        if (value instanceof ByteBuffer buffer) {
            byte[] bytes = new byte[buffer.remaining()];
            buffer.duplicate().get(bytes);
            return bytes;
        }
        throw new IllegalArgumentException("a binary column was read as " + value.getClass().getName());
    }

    private static long number(@Nullable Object value) {
        if (value instanceof Number n) {
            return n.longValue();
        }
        throw new IllegalArgumentException("a BIGINT column was read as " + (value == null ? "null" : value.getClass().getName()));
    }

    @Override
    public String toString() {
        return "R2dbcExecutor[" + dialect.name() + ", " + table + "]";
    }
}
