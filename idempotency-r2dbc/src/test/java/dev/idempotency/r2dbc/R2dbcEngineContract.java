package dev.idempotency.r2dbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.IdempotentCall;
import dev.idempotency.KeyMismatchException;
import dev.idempotency.KeyPolicy;
import dev.idempotency.MissingTableException;
import dev.idempotency.NestedKeyException;
import dev.idempotency.Outcome;
import dev.idempotency.TransactionConflictException;
import dev.idempotency.TransactionRequiredException;
import dev.idempotency.jdbc.dialect.TableName;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.IsolationLevel;
import io.r2dbc.spi.R2dbcRollbackException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

/**
 * The R2DBC engine's promises, run on each database by a subclass: the transactional mode's, as the
 * blocking engine keeps them (docs/contract.md), in the caller's R2DBC transaction. Every test uses
 * keys of its own; the suite's BlockHound (installed for every test of this module) fails a test
 * whose engine blocks a non-blocking thread.
 */
abstract class R2dbcEngineContract {

    private static final Duration WAIT = Duration.ofSeconds(30);

    abstract R2dbcDatabase database();

    private R2dbcIdempotency engine(KeyPolicy policy) {
        return R2dbcIdempotency.builder(database().dialect()).table(R2dbcDatabase.TABLE).keyPolicy(policy).build();
    }

    private R2dbcIdempotency engine() {
        return engine(KeyPolicy.ofDefaults());
    }

    private static IdempotencyKey newKey() {
        return IdempotencyKey.of("r2dbc", UUID.randomUUID().toString());
    }

    private static boolean notInProgress(Outcome<?> outcome) {
        return !(outcome instanceof Outcome.InProgress);
    }

    /** @return {@code execute} of {@code key} in a transaction of its own, committed unless in progress */
    private <T> Outcome<T> once(R2dbcIdempotency engine, IdempotentCall<T> call, java.util.function.Supplier<Mono<T>> work) {
        return database().<Outcome<T>>inTransaction(c -> engine.execute(call, c, work), R2dbcEngineContract::notInProgress).block(WAIT);
    }

    @Test
    void concurrentDuplicatesRunTheWorkOnceAndReplayItsBytes() {
        R2dbcIdempotency engine = engine();
        IdempotentCall<byte[]> call = IdempotentCall.of(newKey());
        AtomicInteger runs = new AtomicInteger();
        int duplicates = 6;
        List<Outcome<byte[]>> outcomes = Flux.range(0, duplicates)
                .flatMap(i -> database().<Outcome<byte[]>>inTransaction(c -> engine.execute(call, c, () -> database().offEventLoop(
                                Mono.delay(Duration.ofMillis(150)).map(tick -> new byte[] {0, (byte) runs.incrementAndGet(), -1, 42}))),
                        R2dbcEngineContract::notInProgress)
                        // As a caller does: a conflict the database resolved by aborting the transaction
                        // (MariaDB's deadlock among waiters under REPEATABLE READ) is retried whole, and replays.
                        .retryWhen(Retry.max(3).filter(TransactionConflictException.class::isInstance))
                        .subscribeOn(Schedulers.boundedElastic()))
                .collectList()
                .block(WAIT);
        assertThat(runs).hasValue(1);
        assertThat(outcomes).filteredOn(o -> o instanceof Outcome.Executed).hasSize(1);
        assertThat(outcomes).filteredOn(o -> o instanceof Outcome.Replayed).hasSize(duplicates - 1);
        for (Outcome<byte[]> outcome : outcomes) {
            assertThat(outcome.value()).containsExactly(0, 1, -1, 42);
        }
    }

    /**
     * Concurrent duplicates at each isolation level the JDBC suites run (READ UNCOMMITTED, READ
     * COMMITTED, REPEATABLE READ, SERIALIZABLE), retried as a caller does when the database resolves a conflict by aborting
     * a transaction (a serialization failure, a deadlock's victim): the work runs once per key, and
     * every attempt ends with its result.
     */
    @ParameterizedTest(name = "{displayName} [{0}]")
    @ValueSource(strings = {"READ UNCOMMITTED", "READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"})
    void concurrentDuplicatesAtEachIsolationLevelRunTheWorkOnce(String level) {
        IsolationLevel isolation = IsolationLevel.valueOf(level);
        R2dbcIdempotency engine = engine(KeyPolicy.builder().lockTimeout(Duration.ofSeconds(10)).build());
        IdempotentCall<String> call = IdempotentCall.of(newKey());
        AtomicInteger runs = new AtomicInteger();
        int duplicates = 5;
        List<Outcome<String>> outcomes = Flux.range(0, duplicates)
                .flatMap(i -> database().<Outcome<String>>inTransaction(isolation, c -> engine.execute(call, c, () -> database().offEventLoop(
                                Mono.delay(Duration.ofMillis(50)).map(tick -> "run " + runs.incrementAndGet()))),
                        R2dbcEngineContract::notInProgress)
                        .retryWhen(Retry.backoff(30, Duration.ofMillis(5)).maxBackoff(Duration.ofMillis(100))
                                .filter(R2dbcEngineContract::abortedByTheDatabase))
                        .subscribeOn(Schedulers.boundedElastic()))
                .collectList()
                .block(WAIT);
        assertThat(runs).as("runs at %s", level).hasValue(1);
        assertThat(outcomes).filteredOn(o -> o instanceof Outcome.Executed).hasSize(1);
        assertThat(outcomes).filteredOn(o -> o instanceof Outcome.Replayed).hasSize(duplicates - 1);
        assertThat(outcomes).allSatisfy(o -> assertThat(o.value()).isEqualTo("run 1"));
    }

    /** A transaction the database aborted to resolve a conflict: the engine's typed conflict, or the driver's at the commit. */
    private static boolean abortedByTheDatabase(Throwable e) {
        return e instanceof TransactionConflictException || e instanceof R2dbcRollbackException;
    }

    @Test
    void aCommittedResultIsReplayedByteForByte() {
        R2dbcIdempotency engine = engine();
        IdempotentCall<byte[]> call = IdempotentCall.of(newKey(), Fingerprint.of("order 7"));
        byte[] result = new byte[256];
        for (int i = 0; i < result.length; i++) {
            result[i] = (byte) i;
        }
        AtomicInteger runs = new AtomicInteger();
        Outcome<byte[]> first = once(engine, call, () -> Mono.fromSupplier(() -> {
            runs.incrementAndGet();
            return result.clone();
        }));
        Outcome<byte[]> again = once(engine, call, () -> Mono.fromSupplier(() -> {
            runs.incrementAndGet();
            return new byte[0];
        }));
        assertThat(first).isInstanceOf(Outcome.Executed.class);
        assertThat(again).isInstanceOf(Outcome.Replayed.class);
        assertThat(again.value()).isEqualTo(result);
        assertThat(runs).hasValue(1);
    }

    @Test
    void aWorkThatEmitsNothingRecordsANullResult_andOneThatEmitsTwoIsRefused() {
        R2dbcIdempotency engine = engine();
        IdempotencyKey key = newKey();
        Outcome<String> first = once(engine, IdempotentCall.of(key), Mono::empty);
        Outcome<String> again = once(engine, IdempotentCall.of(key), () -> Mono.just("not null"));
        assertThat(first).isInstanceOf(Outcome.Executed.class);
        assertThat(again).isInstanceOf(Outcome.Replayed.class);
        assertThat(again.value()).isNull();
        IdempotencyKey twice = newKey();
        assertThatThrownBy(() -> database().<Outcome<String>>inTransaction(
                c -> engine.<String>execute(twice, c, () -> Flux.just("a", "b")), o -> true).block(WAIT))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("emitted 2 elements");
        assertThat(once(engine, IdempotentCall.of(twice), () -> Mono.just("one"))).isInstanceOf(Outcome.Executed.class);
    }

    @Test
    void aRolledBackAttemptLeavesNothingAndTheNextRuns() {
        R2dbcIdempotency engine = engine();
        IdempotencyKey key = newKey();
        Outcome<String> rolledBack = database().<Outcome<String>>inTransaction(
                c -> engine.execute(key, c, () -> Mono.just("first")), outcome -> false).block(WAIT);
        Outcome<String> next = once(engine, IdempotentCall.of(key), () -> Mono.just("second"));
        assertThat(rolledBack).isInstanceOf(Outcome.Executed.class);
        assertThat(next).isInstanceOf(Outcome.Executed.class);
        assertThat(next.value()).isEqualTo("second");
    }

    @Test
    void anExpiredRecordIsTakenOverAndTheWorkRunsAgain() {
        Instant t0 = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        AtomicReference<Instant> now = new AtomicReference<>(t0);
        KeyPolicy policy = KeyPolicy.builder().retention(Duration.ofMinutes(1)).build();
        R2dbcIdempotency engine = R2dbcIdempotency.builder(database().dialect()).table(R2dbcDatabase.TABLE).keyPolicy(policy)
                .clock(now::get).build();
        IdempotentCall<String> call = IdempotentCall.of(newKey(), Fingerprint.of("first"));
        once(engine, call, () -> Mono.just("first"));
        now.set(t0.plus(Duration.ofMinutes(1)).minusMillis(1));
        assertThat(once(engine, call, () -> Mono.just("early"))).isInstanceOf(Outcome.Replayed.class);
        now.set(t0.plus(Duration.ofMinutes(1)));
        IdempotentCall<String> other = IdempotentCall.of(call.key(), Fingerprint.of("second"));
        Outcome<String> taken = once(engine, other, () -> Mono.just("second"));
        assertThat(taken).isInstanceOf(Outcome.Executed.class);
        assertThat(once(engine, other, () -> Mono.just("third")).value()).isEqualTo("second");
    }

    @Test
    void anotherFingerprintIsAMismatch() {
        R2dbcIdempotency engine = engine();
        IdempotencyKey key = newKey();
        once(engine, IdempotentCall.of(key, Fingerprint.of("pay 10")), () -> Mono.just("paid"));
        AtomicInteger runs = new AtomicInteger();
        Outcome<String> other = once(engine, IdempotentCall.of(key, Fingerprint.of("pay 99")),
                () -> Mono.fromSupplier(() -> "paid " + runs.incrementAndGet()));
        assertThat(other).isInstanceOf(Outcome.Mismatch.class);
        assertThatThrownBy(other::value).isInstanceOf(KeyMismatchException.class);
        assertThat(runs).hasValue(0);
    }

    @Test
    void aKeyThatAnotherOpenTransactionHoldsIsInProgressAfterTheLockTimeout() throws Exception {
        R2dbcIdempotency holder = engine();
        R2dbcIdempotency waiter = engine(KeyPolicy.builder().lockTimeout(Duration.ofMillis(300)).build());
        IdempotencyKey key = newKey();
        CountDownLatch claimed = new CountDownLatch(1);
        Sinks.Empty<Void> release = Sinks.empty();
        Disposable held = database().<Outcome<String>>inTransaction(c -> holder.execute(key, c, () -> Mono.just("held"))
                        .flatMap(outcome -> {
                            claimed.countDown();
                            return release.asMono().thenReturn(outcome);
                        }), outcome -> false)
                .subscribeOn(Schedulers.boundedElastic())
                .subscribe();
        try {
            assertThat(claimed.await(30, TimeUnit.SECONDS)).isTrue();
            AtomicInteger runs = new AtomicInteger();
            Outcome<String> waited = database().<Outcome<String>>inTransaction(c -> database().boundLockWaits(c, Duration.ofMillis(300))
                    .then(waiter.execute(key, c, () -> Mono.fromSupplier(() -> "ran " + runs.incrementAndGet()))), outcome -> false)
                    .block(WAIT);
            assertThat(waited).isInstanceOf(Outcome.InProgress.class);
            assertThat(runs).hasValue(0);
        } finally {
            release.tryEmitEmpty();
        }
        held.dispose();
    }

    /**
     * Another transaction's work completed the key but has not committed, and then rolls back: a claim
     * at READ UNCOMMITTED, whose plain reads see that record, must not replay its result; as at READ
     * COMMITTED it waits for the open claim, and runs the work itself once the holder rolls back.
     */
    @Test
    void aClaimAtReadUncommittedNeverReplaysAResultThatWasNotCommitted() throws Exception {
        R2dbcIdempotency engine = engine(KeyPolicy.builder().lockTimeout(Duration.ofSeconds(10)).build());
        IdempotencyKey key = newKey();
        CountDownLatch completed = new CountDownLatch(1);
        Sinks.Empty<Void> release = Sinks.empty();
        Disposable held = database().<Outcome<String>>inTransaction(c -> engine.execute(key, c, () -> Mono.just("rolled back"))
                        .flatMap(outcome -> {
                            completed.countDown();
                            return release.asMono().thenReturn(outcome);
                        }), outcome -> false)
                .subscribeOn(Schedulers.boundedElastic())
                .subscribe();
        AtomicInteger runs = new AtomicInteger();
        try {
            assertThat(completed.await(30, TimeUnit.SECONDS)).isTrue();
            java.util.concurrent.CompletableFuture<Outcome<String>> waiter = database().<Outcome<String>>inTransaction(
                            IsolationLevel.READ_UNCOMMITTED,
                            c -> engine.execute(key, c, () -> Mono.fromSupplier(() -> "ran " + runs.incrementAndGet())),
                            R2dbcEngineContract::notInProgress)
                    .subscribeOn(Schedulers.boundedElastic())
                    .toFuture();
            Thread.sleep(300);
            boolean answeredBeforeTheRollback = waiter.isDone();
            release.tryEmitEmpty();
            Outcome<String> answered = waiter.get(30, TimeUnit.SECONDS);
            assertThat(answered).as("the READ UNCOMMITTED claim's answer (given %s the holder rolled back)",
                    answeredBeforeTheRollback ? "before" : "after").isInstanceOf(Outcome.Executed.class);
            assertThat(answered.value()).isEqualTo("ran 1");
        } finally {
            release.tryEmitEmpty();
        }
        held.dispose();
        assertThat(once(engine, IdempotentCall.of(key), () -> Mono.just("again")).value()).isEqualTo("ran 1");
        assertThat(runs).hasValue(1);
    }

    @Test
    void aCancelledWorkRolledBackLeavesNothingAndTheNextAttemptRuns() throws Exception {
        R2dbcIdempotency engine = engine();
        IdempotencyKey key = newKey();
        Connection c = Mono.from(database().factory().create()).block(WAIT);
        try {
            Mono.from(c.beginTransaction()).block(WAIT);
            CountDownLatch started = new CountDownLatch(1);
            Disposable subscription = engine.execute(key, c, () -> Mono.<String>never().doOnSubscribe(s -> started.countDown()))
                    .subscribe();
            assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
            subscription.dispose();
            Mono.from(c.rollbackTransaction()).block(WAIT);
        } finally {
            Mono.from(c.close()).block(WAIT);
        }
        Outcome<String> next = once(engine, IdempotentCall.of(key), () -> Mono.just("ran"));
        assertThat(next).isInstanceOf(Outcome.Executed.class);
    }

    @Test
    void aFailedWorkReachesTheCallerUnchangedAndItsClaimIsReleased() {
        R2dbcIdempotency engine = engine();
        IdempotencyKey key = newKey();
        IllegalStateException failure = new IllegalStateException("card declined");
        // Committed anyway: the released claim leaves no record.
        assertThatThrownBy(() -> database().<Outcome<String>>inTransaction(c -> engine.<String>execute(key, c, () -> Mono.error(failure))
                .onErrorResume(IllegalStateException.class, e -> Mono.from(c.commitTransaction()).then(Mono.error(e))), o -> true)
                .block(WAIT)).isSameAs(failure);
        assertThat(once(engine, IdempotentCall.of(key), () -> Mono.just("ran"))).isInstanceOf(Outcome.Executed.class);
    }

    @Test
    void aFinalFailureIsUndoneToItsSavepointAndRecorded() {
        R2dbcIdempotency engine = engine(KeyPolicy.builder().finalFailures(IllegalArgumentException.class).build());
        IdempotencyKey key = newKey();
        Outcome<String> first = once(engine, IdempotentCall.of(key), () -> Mono.error(new IllegalArgumentException("no such account")));
        Outcome<String> again = once(engine, IdempotentCall.of(key), () -> Mono.just("ran"));
        assertThat(first).isInstanceOf(Outcome.Failed.class);
        assertThat(again).isInstanceOf(Outcome.Failed.class);
        assertThat(((Outcome.Failed<String>) again).errorMessage()).isEqualTo("no such account");
    }

    @Test
    void aConnectionWithoutATransactionIsRefused() {
        R2dbcIdempotency engine = engine();
        Connection c = Mono.from(database().factory().create()).block(WAIT);
        try {
            assertThatThrownBy(() -> engine.execute(newKey(), c, () -> Mono.just("x")).block(WAIT))
                    .isInstanceOf(TransactionRequiredException.class)
                    .hasMessageContaining("auto-commit")
                    .hasMessageContaining("beginTransaction()");
        } finally {
            Mono.from(c.close()).block(WAIT);
        }
    }

    @Test
    void theKeysOwnWorkCallingAgainIsNested() {
        R2dbcIdempotency engine = engine();
        IdempotencyKey key = newKey();
        assertThatThrownBy(() -> database().<Outcome<String>>inTransaction(c -> engine.execute(key, c,
                () -> engine.<String>execute(key, c, () -> Mono.just("inner")).map(Outcome::value)), o -> false).block(WAIT))
                .isInstanceOf(NestedKeyException.class);
    }

    @Test
    void theListenerHearsEachOutcomeAndAMissingTableIsNamed() {
        List<Outcome.Status> heard = Collections.synchronizedList(new ArrayList<>());
        List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
        IdempotencyListener listener = new IdempotencyListener() {
            @Override
            public void onOutcome(IdempotencyKey key, Outcome.Status status, Duration elapsed) {
                heard.add(status);
            }

            @Override
            public void onError(IdempotencyKey key, Throwable failure, Duration elapsed) {
                errors.add(failure);
            }
        };
        R2dbcIdempotency engine = R2dbcIdempotency.builder(database().dialect()).table(R2dbcDatabase.TABLE).listener(listener).build();
        IdempotencyKey key = newKey();
        once(engine, IdempotentCall.of(key), () -> Mono.just(7));
        once(engine, IdempotentCall.of(key), () -> Mono.just(8));
        assertThat(heard).containsExactly(Outcome.Status.EXECUTED, Outcome.Status.REPLAYED);

        R2dbcIdempotency missing = R2dbcIdempotency.builder(database().dialect()).table(TableName.of("r2dbc_no_such_table"))
                .listener(listener).build();
        assertThatThrownBy(() -> once(missing, IdempotentCall.of(key), () -> Mono.just(9)))
                .isInstanceOf(MissingTableException.class)
                .hasMessageContaining("r2dbc_no_such_table");
        assertThat(errors).hasSize(1);
    }
}
