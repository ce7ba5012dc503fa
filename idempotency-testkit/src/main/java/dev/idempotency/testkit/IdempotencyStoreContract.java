package dev.idempotency.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.booleans;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import dev.idempotency.AbandonedClaimException;
import dev.idempotency.DuplicateKeyInChunkException;
import dev.idempotency.Fingerprint;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.ItemWork;
import dev.idempotency.KeyPolicy;
import dev.idempotency.LeaseLostException;
import dev.idempotency.LeasePolicy;
import dev.idempotency.LeasedWork;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.NestedKeyException;
import dev.idempotency.Outcome;
import dev.idempotency.Phases;
import dev.idempotency.ResultCodec;
import dev.idempotency.ResultCodecException;
import dev.idempotency.TransactionConflictException;
import dev.idempotency.TransactionRequiredException;
import dev.idempotency.TxWork;
import dev.idempotency.Work;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.LeasedCompletion;
import dev.idempotency.spi.LeasingStore;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.RecoveryPoint;
import dev.idempotency.spi.StoredRecord;
import dev.idempotency.spi.TransactionRunner;
import dev.idempotency.testkit.Operations.Advance;
import dev.idempotency.testkit.Operations.AdvanceToExpiry;
import dev.idempotency.testkit.Operations.Attempt;
import dev.idempotency.testkit.Operations.Execute;
import dev.idempotency.testkit.Operations.Purge;
import dev.idempotency.testkit.Operations.Round;
import dev.idempotency.testkit.Operations.Sequence;
import dev.idempotency.testkit.Operations.Start;
import dev.idempotency.testkit.Operations.Step;
import dev.idempotency.testkit.Operations.WorkKind;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.quicktheories.core.Gen;

/**
 * The contract of section 3 of docs/contract.md, for any {@link IdempotencyStore}: extend it,
 * answer the hooks, and run it as a JUnit 5 test class.
 *
 * <pre>{@code
 * class MyStoreContractTest extends IdempotencyStoreContract<MyTx> {
 *     protected IdempotencyStore<MyTx> createStore(InstantSource clock) { return new MyStore(...); }
 *     protected MyTx begin() { return myDatabase.begin(); }
 *     protected void commit(MyTx tx) { tx.commit(); }
 *     protected void rollback(MyTx tx) { tx.rollback(); }
 * }
 * }</pre>
 *
 * <p>Everything runs through the real engine, {@link Idempotency}, built with the store, the kit's
 * {@link TestClock} and a policy with a retention of {@link #RETENTION} and final failures, so that
 * the contract checks what users get. It holds:
 * <ul>
 *   <li>one example test per promise, named after it, including the chunk promises of
 *       section 9 of docs/contract.md ({@link Idempotency#executeChunk}, over the store's
 *       {@code claimAll} and {@code completeAll}: a store that overrides them is checked
 *       there);</li>
 *   <li>a stateful property: random sequences of executions (keys that differ by scope and by case,
 *       two fingerprints, work that returns or throws a plain or a final failure, then commit or roll
 *       back), clock moves and purges, compared after every step with a model of the contract. A
 *       failure reports the shortest failing sequence found, one step per line;</li>
 *   <li>a concurrency property: rounds of attempts on overlapping keys from several threads, each in
 *       its own transaction, some committing and some rolling back;</li>
 *   <li>a chunk property: random sequences of chunks and clock moves, compared with a model.</li>
 * </ul>
 *
 * <p><b>Lease mode</b> (docs/contract.md, section 4; the promises of
 * {@link dev.idempotency.spi.LeasingStore}), checked only when the store is a {@code LeasingStore}
 * (otherwise those tests are skipped): one example per promise on the store's primitives, each in a
 * short transaction of its own; examples through the engine, {@link ManagedIdempotency}, over the
 * runner of {@link #transactions()}; and a stateful property of lease operations by several owners,
 * compared with a model. A lease primitive reads the time from the store's own clock, which may be
 * the kit's {@link TestClock} (the reference store) or a database server's, which no test can move:
 * so a lease that must end is short ({@link #SHORT_LEASE}) and is let run out by
 * {@link #letLeaseRunOut(Duration)}, which both moves the kit's clock and sleeps past it, and a lease
 * that must not end is long ({@link #LIVE_LEASE}). No check depends on how long anything took. A
 * store whose clock is not the kit's must empty itself in {@link #reset()}, since the kit's purge
 * judges expiry by the kit's clock. A fenced primitive ({@code extendLease}, {@code checkpoint},
 * {@code completeLeased}, {@code releaseLease}) is expected to succeed exactly while the record is in
 * progress and the token is its owner's: a release ends the lease but keeps the owner, and a
 * completed record is held by no one.
 * The properties' effort is set by {@link #effort()}: by default {@link Effort#fromSystemProperty()}.
 * Every failure message starts with the promise it found broken, such as
 * {@code Contract 3.3 (replay)}.
 *
 * <p>The contract uses a single store for the whole test class, and one thread per transaction.
 * Before every test and every generated example it calls {@link #reset()}, then moves the clock past
 * the retention and purges, so that every example starts from an empty store.
 *
 * <p>Instances are used by one test thread (the contract starts its own threads for concurrency).
 *
 * @param <C> the store's transaction type
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class IdempotencyStoreContract<C> {

    /** The retention of the policy under test. */
    public static final Duration RETENTION = Duration.ofHours(1);
    /** How long an attempt waits for a concurrent holder, except in the lock-timeout test. */
    public static final Duration LOCK_TIMEOUT = Duration.ofSeconds(10);
    /** The lock timeout of the lock-timeout test; stores may round it up (JDBC stores: to 1 second). */
    public static final Duration SHORT_LOCK_TIMEOUT = Duration.ofMillis(200);
    /**
     * How much longer than its lock timeout, rounded up to whole seconds, an attempt may wait for an
     * open holder before it must have answered {@code InProgress}: 2 seconds. Generous on purpose: it
     * absorbs the rounding of JDBC query timeouts and a loaded machine, yet catches a store that
     * ignores the timeout and waits for its database's own lock timeout instead.
     */
    public static final Duration LOCK_WAIT_TOLERANCE = Duration.ofSeconds(2);
    /** Where the clock starts. */
    public static final Instant START = Instant.parse("2026-03-29T01:30:00Z");
    /** A lease that does not end during a test. */
    public static final Duration LIVE_LEASE = Duration.ofHours(1);
    /** A lease that a test lets run out ({@link #letLeaseRunOut(Duration)}). */
    public static final Duration SHORT_LEASE = Duration.ofMillis(10);
    /** The shortest lease the engine accepts ({@link LeasePolicy}), for engine tests that let a lease run out. */
    public static final Duration ENGINE_SHORT_LEASE = Duration.ofMillis(100);
    /** How far past a lease's end {@link #letLeaseRunOut(Duration)} moves the clock and sleeps. */
    public static final Duration RUN_OUT_MARGIN = Duration.ofMillis(5);

    private static final int PURGE_BATCH = 1000;
    private static final long WAIT_SECONDS = 60;

    private final TestClock clock = new TestClock(START);
    private IdempotencyStore<C> store;
    private Idempotency<C> idem;
    private Idempotency<C> impatient;
    private ExecutorService threads;

    /** For subclasses. */
    protected IdempotencyStoreContract() {
    }

    // ---- hooks -----------------------------------------------------------------------------------

    /**
     * Creates the store under test, once per test class. Create its tables here if it needs any.
     *
     * @param clock the kit's clock; a store that reads the time itself must read it from here
     * @return the store
     * @throws Exception if it cannot be created
     */
    protected abstract IdempotencyStore<C> createStore(InstantSource clock) throws Exception;

    /**
     * Opens a transaction. Called from several threads at once: each call must return a transaction
     * of its own (for JDBC, a connection from a pool with auto-commit off).
     *
     * @return an open transaction
     * @throws Exception if it cannot be opened
     */
    protected abstract C begin() throws Exception;

    /**
     * Commits and ends a transaction opened by {@link #begin()} (for JDBC: commit, then close).
     *
     * @param tx the transaction
     * @throws Exception if the commit fails; the contract then counts the transaction as rolled back
     */
    protected abstract void commit(C tx) throws Exception;

    /**
     * Rolls back and ends a transaction opened by {@link #begin()} (for JDBC: roll back, then close).
     *
     * @param tx the transaction
     * @throws Exception if the rollback fails
     */
    protected abstract void rollback(C tx) throws Exception;

    /**
     * Called before every test and every generated example, before the kit purges everything.
     * Optional: delete the store's records here if purging cannot (the default does nothing).
     *
     * @throws Exception if it fails
     */
    protected void reset() throws Exception {
    }

    /**
     * The engine's own transactions, for lease mode ({@link ManagedIdempotency}): each call begins a
     * transaction, runs the work, and commits it; if the work or the commit throws, the transaction
     * is rolled back and the throwable reaches the caller unchanged (a failed commit as an unchecked
     * exception). The default is built from {@link #begin()}, {@link #commit(Object)} and
     * {@link #rollback(Object)}; a store with a runner of its own returns that one here.
     *
     * @return the runner the lease-mode tests give the engine
     */
    protected TransactionRunner<C> transactions() {
        return new TransactionRunner<>() {
            @Override
            public <T, X extends Exception> T inTransaction(TxWork<C, T, X> work) throws X {
                return committed(work);
            }
        };
    }

    /**
     * Transactions that the store must refuse, of every kind it can tell apart from a usable one,
     * other than one that has ended (the kit tries that itself): for JDBC a connection in auto-commit
     * mode, a closed one, a read-only one. Optional: by default none, and
     * {@code unusableTransactionsAreRefusedBeforeAnythingIsWritten} is skipped. The kit calls it
     * once per test that uses it, and closes each {@link UnusableTransaction#discard()} afterwards.
     *
     * @return the unusable transactions, each with what makes it unusable
     * @throws Exception if one cannot be made
     */
    protected List<UnusableTransaction<C>> unusableTransactions() throws Exception {
        return List.of();
    }

    /**
     * A transaction that the store must refuse, from {@link #unusableTransactions()}.
     *
     * @param kind what makes it unusable, for the report, such as {@code "a connection in auto-commit mode"}
     * @param transaction the transaction
     * @param discard what ends it after the test (for JDBC the connection itself, which closing gives
     *     back to the pool), or {@code null} if nothing must be done
     * @param <T> the store's transaction type
     */
    public record UnusableTransaction<T>(String kind, T transaction, AutoCloseable discard) {
        /**
         * @param kind what makes it unusable
         * @param transaction the transaction
         * @param discard what ends it after the test, or {@code null}
         */
        public UnusableTransaction {
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(transaction, "transaction");
        }
    }

    /** @return how many examples the properties run; by default from {@value Effort#PROPERTY} */
    protected Effort effort() {
        return Effort.fromSystemProperty();
    }

    /** @return the kit's clock, also given to {@link #createStore(InstantSource)} */
    protected final TestClock clock() {
        return clock;
    }

    // ---- lifecycle -------------------------------------------------------------------------------

    @BeforeAll
    final void startKit() throws Exception {
        store = Objects.requireNonNull(createStore(clock), "createStore returned null");
        KeyPolicy policy = KeyPolicy.builder().retention(RETENTION).lockTimeout(LOCK_TIMEOUT).finalFailures(FinalFailure.class).build();
        idem = Idempotency.builder(store).clock(clock).keyPolicy(policy).build();
        impatient = Idempotency.builder(store).clock(clock).keyPolicy(policy.toBuilder().lockTimeout(SHORT_LOCK_TIMEOUT).build()).build();
        threads = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "contract-attempt");
            t.setDaemon(true);
            return t;
        });
    }

    @AfterAll
    final void stopKit() {
        if (threads != null) {
            threads.shutdownNow();
        }
    }

    @BeforeEach
    final void startEmpty() throws Exception {
        clean();
    }

    void clean() throws Exception {
        reset();
        // Past the longest retention the kit writes: twice the retention, for a lease held across a round.
        clock.advance(RETENTION.multipliedBy(2).plusMinutes(1));
        int removed;
        do {
            C tx = open();
            try {
                removed = idem.purgeExpired(tx, PURGE_BATCH);
            } catch (RuntimeException e) {
                rollback(tx);
                throw e;
            }
            commit(tx);
        } while (removed >= PURGE_BATCH);
    }

    /**
     * Calls {@link #begin()}; if it fails, says that the hooks may be at fault (a pool that ran dry
     * because {@link #commit(Object)} or {@link #rollback(Object)} does not give connections back).
     */
    C open() throws Exception {
        long started = System.nanoTime();
        C tx;
        try {
            tx = begin();
        } catch (Exception e) {
            throw new HookFailure(Promise.HOOKS.broken("begin() failed after " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)
                    + " ms with " + e + ". If it timed out waiting for a connection, the pool has run dry: do commit(tx) and rollback(tx)"
                    + " close the connection?"), e);
        }
        if (tx == null) {
            throw new HookFailure(Promise.HOOKS.broken("begin() returned null"), null);
        }
        return tx;
    }

    /** A hook of the subclass does not do its part; reported as such, never blamed on the store. */
    static final class HookFailure extends AssertionError {
        HookFailure(String message, Throwable cause) {
            super(message, cause);
        }
    }

    // ---- examples, one per promise ----------------------------------------------------------------

    private static final Fingerprint A = Fingerprint.of("A");
    private static final Fingerprint B = Fingerprint.of("B");

    /**
     * Contract 3.3 (docs/contract.md): after a commit, a retry with the same fingerprint gets the
     * recorded result back.
     */
    @Test
    void committedThenRetriedIsReplayed() throws Exception {
        IdempotencyKey key = IdempotencyKey.of("replay", "k1");
        Counting first = new Counting("first");
        Counting retry = new Counting("retry");
        Outcome<String> executed = inTx(idem, key, A, first, true);
        assertOutcome(Promise.REPLAY, executed, Outcome.Status.EXECUTED, "first");
        Outcome<String> replayed = inTx(idem, key, A, retry, true);
        assertOutcome(Promise.REPLAY, replayed, Outcome.Status.REPLAYED, "first");
        assertThat(retry.runs()).as(Promise.REPLAY.broken("The retry's work ran")).isZero();
        assertThat(inTx(idem, key, A, retry, false).valueOr(null)).as(Promise.REPLAY.broken("A second retry did not replay")).isEqualTo("first");
    }

    /**
     * Contract 3 (docs/contract.md): a rolled-back attempt leaves nothing; the retry runs the work.
     */
    @Test
    void rolledBackThenRetriedRunsAgain() throws Exception {
        IdempotencyKey key = IdempotencyKey.of("rollback", "k1");
        Outcome<String> first = inTx(idem, key, A, new Counting("first"), false);
        assertOutcome(Promise.ROLLBACK, first, Outcome.Status.EXECUTED, "first");
        Counting retry = new Counting("retry");
        Outcome<String> again = inTx(idem, key, A, retry, true);
        assertOutcome(Promise.ROLLBACK, again, Outcome.Status.EXECUTED, "retry");
        assertThat(retry.runs()).as(Promise.ROLLBACK.broken("The retry's work did not run")).isEqualTo(1);
    }

    /**
     * Contract 3.3 (docs/contract.md): the same key with another fingerprint is a mismatch, and the
     * work does not run.
     */
    @Test
    void sameKeyDifferentFingerprintIsMismatch() throws Exception {
        IdempotencyKey key = IdempotencyKey.of("mismatch", "k1");
        inTx(idem, key, A, new Counting("first"), true);
        Counting other = new Counting("other");
        Outcome<String> outcome = inTx(idem, key, B, other, true);
        assertOutcome(Promise.MISMATCH, outcome, Outcome.Status.MISMATCH, null);
        assertThat(other.runs()).as(Promise.MISMATCH.broken("The work ran")).isZero();
        assertOutcome(Promise.MISMATCH, inTx(idem, key, Fingerprint.NONE, other, true), Outcome.Status.MISMATCH, null);
        assertOutcome(Promise.MISMATCH, inTx(idem, key, A, other, true), Outcome.Status.REPLAYED, "first");
    }

    /**
     * Contract 2 and 3.3 (docs/contract.md): at the end of the retention the key counts as new, and
     * the new record answers.
     */
    @Test
    void expiredRecordRunsAgain() throws Exception {
        IdempotencyKey key = IdempotencyKey.of("expiry", "k1");
        inTx(idem, key, A, new Counting("first"), true);
        clock.advance(RETENTION.minusMillis(1));
        assertOutcome(Promise.EXPIRY, inTx(idem, key, A, new Counting("early"), true), Outcome.Status.REPLAYED, "first");
        clock.advance(Duration.ofMillis(1));
        Counting late = new Counting("late");
        assertOutcome(Promise.EXPIRY, inTx(idem, key, B, late, true), Outcome.Status.EXECUTED, "late");
        assertThat(late.runs()).as(Promise.EXPIRY.broken("At the exact expiry, the work did not run")).isEqualTo(1);
        assertOutcome(Promise.EXPIRY, inTx(idem, key, B, new Counting("retry"), true), Outcome.Status.REPLAYED, "late");
    }

    /**
     * Contract 3.3 (docs/contract.md): an attempt that meets an open holder waits; the holder
     * commits; the attempt replays.
     */
    @Test
    void concurrentHolderThatCommitsIsReplayed() throws Exception {
        IdempotencyKey key = IdempotencyKey.of("holder", "commits");
        Counting waiterWork = new Counting("waiter");
        Outcome<String> waited = withHolder(Promise.HOLDER_COMMITS, key, idem, waiterWork, true);
        assertOutcome(Promise.HOLDER_COMMITS, waited, Outcome.Status.REPLAYED, "holder");
        assertThat(waiterWork.runs()).as(Promise.HOLDER_COMMITS.broken("The waiter's work ran")).isZero();
    }

    /**
     * Contract 3.3 (docs/contract.md): an attempt that meets an open holder waits; the holder rolls
     * back; the attempt runs.
     */
    @Test
    void concurrentHolderThatRollsBackLetsTheWaiterRun() throws Exception {
        IdempotencyKey key = IdempotencyKey.of("holder", "rolls-back");
        Counting waiterWork = new Counting("waiter");
        Outcome<String> waited = withHolder(Promise.HOLDER_ROLLS_BACK, key, idem, waiterWork, false);
        assertOutcome(Promise.HOLDER_ROLLS_BACK, waited, Outcome.Status.EXECUTED, "waiter");
        assertOutcome(Promise.HOLDER_ROLLS_BACK, inTx(idem, key, A, new Counting("retry"), true), Outcome.Status.REPLAYED, "waiter");
    }

    /**
     * Contract 3.3 (docs/contract.md): an attempt that waits longer than the lock timeout gets
     * InProgress, within the timeout rounded up to whole seconds plus {@link #LOCK_WAIT_TOLERANCE}:
     * with the 200 ms timeout of this test, within 3 seconds.
     */
    @Test
    void concurrentHolderPastTheLockTimeoutGivesInProgress() throws Exception {
        IdempotencyKey key = IdempotencyKey.of("holder", "keeps-it");
        Counting waiterWork = new Counting("waiter");
        Duration bound = lockWaitBound(SHORT_LOCK_TIMEOUT);
        C holder = open();
        boolean open = true;
        try {
            assertOutcome(Promise.LOCK_TIMEOUT, idem.execute(IdempotentCall.of(key, A), holder, new Counting("holder")), Outcome.Status.EXECUTED, "holder");
            long started = System.nanoTime();
            Future<Outcome<String>> waiter = threads.submit(() -> inTx(impatient, key, A, waiterWork, true));
            Outcome<String> waited;
            try {
                waited = waiter.get(bound.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                long after = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                open = false;
                rollback(holder);
                Outcome<String> late = await(Promise.LOCK_TIMEOUT, waiter);
                throw new AssertionError(Promise.LOCK_TIMEOUT.broken("With a lock timeout of " + SHORT_LOCK_TIMEOUT.toMillis() + " ms the"
                        + " wait must end within " + bound.toMillis() + " ms; the attempt was still waiting after " + after + " ms, and got "
                        + describe(late) + " once the holder rolled back. Does the store pass the request's lockTimeout() to its"
                        + " database (for JDBC: Statement.setQueryTimeout, or a session lock timeout that it sets back)?"), e);
            } catch (ExecutionException e) {
                throw new AssertionError(Promise.LOCK_TIMEOUT.broken("The waiting attempt failed: " + e.getCause()), e.getCause());
            }
            assertOutcome(Promise.LOCK_TIMEOUT, waited, Outcome.Status.IN_PROGRESS, null);
            assertThat(waiterWork.runs()).as(Promise.LOCK_TIMEOUT.broken("The waiter's work ran")).isZero();
            open = false;
            commit(holder);
        } finally {
            if (open) {
                rollback(holder);
            }
        }
        assertOutcome(Promise.LOCK_TIMEOUT, inTx(idem, key, A, waiterWork, true), Outcome.Status.REPLAYED, "holder");
    }

    /**
     * Contract 3.4 (docs/contract.md): the work's exception reaches the caller as it was thrown,
     * and nothing is recorded.
     */
    @Test
    void workExceptionPassesThroughUnchangedAndRecordsNothing() throws Exception {
        IdempotencyKey key = IdempotencyKey.of("work-exception", "k1");
        PlainFailure thrown = new PlainFailure("the work failed");
        C tx = open();
        Throwable caught = null;
        try {
            idem.execute(IdempotentCall.of(key, A), tx, () -> {
                throw thrown;
            });
        } catch (Throwable t) {
            caught = t;
        }
        // The caller should roll back; committing anyway must still record nothing.
        commit(tx);
        assertThat(caught).as(Promise.WORK_EXCEPTION.broken("The caller did not get the work's own exception")).isSameAs(thrown);
        assertThat(thrown.getSuppressed()).as(Promise.WORK_EXCEPTION.broken("Releasing the claim after the work failed threw (the engine"
                + " attaches that failure to the work's exception)")).isEmpty();
        Counting retry = new Counting("retry");
        assertOutcome(Promise.WORK_EXCEPTION, inTx(idem, key, A, retry, true), Outcome.Status.EXECUTED, "retry");
    }

    /**
     * Contract 3.4 (docs/contract.md): a final failure is recorded and replayed, and the work's
     * partial writes are undone. The partial write here is a store write: the failing work executes
     * a second key in the same transaction, which must not survive.
     */
    @Test
    void finalFailureIsRecordedAndReplayedWithoutPartialWrites() throws Exception {
        IdempotencyKey key = IdempotencyKey.of("final-failure", "k1");
        IdempotencyKey partial = IdempotencyKey.of("final-failure", "partial");
        C tx = open();
        Outcome<String> first;
        try {
            first = idem.execute(IdempotentCall.of(key, A), tx, () -> {
                idem.execute(IdempotentCall.of(partial, A), tx, () -> "partial write");
                throw new FinalFailure("card declined");
            });
        } catch (Throwable t) {
            rollback(tx);
            throw new AssertionError(Promise.FINAL_FAILURE.broken("execute threw " + t), t);
        }
        commit(tx);
        assertThat(first).as(Promise.FINAL_FAILURE.broken("The first attempt's outcome")).isInstanceOf(Outcome.Failed.class);
        Counting retry = new Counting("retry");
        Outcome<String> again = inTx(idem, key, A, retry, true);
        assertThat(again).as(Promise.FINAL_FAILURE.broken("The retry's outcome")).isInstanceOf(Outcome.Failed.class);
        Outcome.Failed<String> failed = (Outcome.Failed<String>) again;
        assertThat(failed.replayed()).as(Promise.FINAL_FAILURE.broken("The retry's failure is not marked replayed")).isTrue();
        assertThat(failed.errorType()).as(Promise.FINAL_FAILURE.broken("The replayed failure's type")).isEqualTo(FinalFailure.class.getName());
        assertThat(failed.errorMessage()).as(Promise.FINAL_FAILURE.broken("The replayed failure's message")).isEqualTo("card declined");
        assertThat(retry.runs()).as(Promise.FINAL_FAILURE.broken("The retry's work ran")).isZero();
        Counting partialRetry = new Counting("partial again");
        assertOutcome(Promise.FINAL_FAILURE, inTx(idem, partial, A, partialRetry, true), Outcome.Status.EXECUTED, "partial again");
    }

    /** Contract 2 (docs/contract.md): the same id in two scopes is two keys. */
    @Test
    void scopesAreSeparate() throws Exception {
        IdempotencyKey tenant1 = IdempotencyKey.of("tenant-1", "order-7");
        IdempotencyKey tenant2 = IdempotencyKey.of("tenant-2", "order-7");
        inTx(idem, tenant1, A, new Counting("one"), true);
        assertOutcome(Promise.SCOPE, inTx(idem, tenant2, B, new Counting("two"), true), Outcome.Status.EXECUTED, "two");
        assertOutcome(Promise.SCOPE, inTx(idem, tenant1, A, new Counting("x"), true), Outcome.Status.REPLAYED, "one");
        assertOutcome(Promise.SCOPE, inTx(idem, tenant2, B, new Counting("x"), true), Outcome.Status.REPLAYED, "two");
    }

    /**
     * Contract 2 (docs/contract.md): key ids are exact; ids that differ in case, or by a trailing
     * character, are other keys.
     */
    @Test
    void keysAreExactAndCaseSensitive() throws Exception {
        List<String> ids = List.of("order-7", "ORDER-7", "Order-7", "order-7.", "order-70");
        for (String id : ids) {
            assertOutcome(Promise.EXACT_KEYS, inTx(idem, IdempotencyKey.of("exact", id), A, new Counting("v-" + id), true),
                    Outcome.Status.EXECUTED, "v-" + id);
        }
        for (String id : ids) {
            assertOutcome(Promise.EXACT_KEYS, inTx(idem, IdempotencyKey.of("exact", id), A, new Counting("x"), false),
                    Outcome.Status.REPLAYED, "v-" + id);
        }
    }

    /**
     * Contract 3.2 (docs/contract.md): a transaction that has ended (committed, or rolled back)
     * cannot carry a record. A failure here is also what a commit or rollback hook that does not
     * end the transaction looks like (for JDBC: one that does not close the connection); the
     * message says so.
     */
    @Test
    void endedTransactionIsRefused() throws Exception {
        for (boolean committed : List.of(true, false)) {
            C tx = open();
            if (committed) {
                commit(tx);
            } else {
                rollback(tx);
            }
            IdempotencyKey key = IdempotencyKey.of("ended", committed ? "committed" : "rolled-back");
            Counting work = new Counting("late");
            Throwable thrown = catchThrowable(() -> idem.execute(IdempotentCall.of(key, A), tx, work));
            String how = committed ? "commit(tx)" : "rollback(tx)";
            assertThat(thrown).as(Promise.TRANSACTION_REQUIRED.broken("execute on a transaction that the " + how + " hook ended was not"
                    + " refused (it " + (thrown == null ? "ran" : "threw " + thrown) + "). Either the store's checkTransaction does not"
                    + " refuse an ended transaction, or the " + how + " hook does not end it: " + Promise.HOOKS.broken("")))
                    .isInstanceOf(TransactionRequiredException.class);
            assertThat(work.runs()).as(Promise.TRANSACTION_REQUIRED.broken("The work ran")).isZero();
        }
    }

    /**
     * The hooks: begin() gives a new open transaction on each call, usable at once, and commit(tx)
     * and rollback(tx) end it, so that the store refuses it afterwards.
     */
    @Test
    void hooksBeginDistinctTransactionsAndEndThem() throws Exception {
        IdempotencyKey key = IdempotencyKey.of("hooks", "k1");
        C first = open();
        C second;
        try {
            second = open();
        } catch (Throwable t) {
            rollbackQuietly(first, t);
            throw t;
        }
        try {
            assertThat(first != second && !first.equals(second)).as(Promise.HOOKS.broken("begin() returned the same transaction twice,"
                    + " while the first was still open: " + first)).isTrue();
            for (C tx : List.of(first, second)) {
                Throwable refused = catchThrowable(() -> store.checkTransaction(tx, key));
                assertThat(refused).as(Promise.HOOKS.broken("The store refused a transaction just returned by begin(): " + refused
                        + ". For JDBC, begin() must turn auto-commit off")).isNull();
            }
        } finally {
            commit(first);
            rollback(second);
        }
        for (C tx : List.of(first, second)) {
            String how = tx == first ? "commit(tx)" : "rollback(tx)";
            Throwable refused = catchThrowable(() -> store.checkTransaction(tx, key));
            assertThat(refused).as(Promise.HOOKS.broken("After the " + how + " hook, the store still accepts the transaction: the hook"
                    + " does not end it (or the store does not refuse an ended transaction: see endedTransactionIsRefused)"))
                    .isInstanceOf(TransactionRequiredException.class);
        }
    }

    /**
     * Contract 3.2 (docs/contract.md): every unusable transaction that
     * {@link #unusableTransactions()} makes (auto-commit, closed, read-only, another store's, ...)
     * is refused with TransactionRequiredException before anything is written: the work does not
     * run, and a retry in a good transaction runs it.
     */
    @Test
    void unusableTransactionsAreRefusedBeforeAnythingIsWritten() throws Exception {
        List<UnusableTransaction<C>> unusable = unusableTransactions();
        assumeTrue(!unusable.isEmpty(), "unusableTransactions() names none: only ended transactions are tried (endedTransactionIsRefused)");
        int n = 0;
        for (UnusableTransaction<C> u : unusable) {
            IdempotencyKey key = IdempotencyKey.of("unusable", "k" + ++n);
            Counting work = new Counting("written through " + u.kind());
            Throwable thrown;
            try (AutoCloseable discard = u.discard()) {
                thrown = catchThrowable(() -> idem.execute(IdempotentCall.of(key, A), u.transaction(), work));
            }
            assertThat(thrown).as(Promise.TRANSACTION_REQUIRED.broken("execute on " + u.kind() + " " + (thrown == null ? "ran"
                    : "threw " + thrown))).isInstanceOf(TransactionRequiredException.class);
            assertThat(work.runs()).as(Promise.TRANSACTION_REQUIRED.broken("The work ran on " + u.kind())).isZero();
            assertOutcome(Promise.TRANSACTION_REQUIRED, inTx(idem, key, A, new Counting("retry"), false), Outcome.Status.EXECUTED, "retry");
        }
    }

    /**
     * Contract 3.5 (docs/contract.md): the result of every built-in codec's type, {@code null},
     * empty and large byte arrays, and a custom codec's, is recorded and replayed exactly.
     */
    @Test
    void everyResultTypeIsRecordedAndReplayedExactly() throws Exception {
        List<Object> samples = Results.samples();
        for (int i = 0; i < samples.size(); i++) {
            Object value = samples.get(i);
            IdempotencyKey key = IdempotencyKey.of("results", "k" + i);
            ResultCodec<Object> codec = value instanceof Results.Receipt ? receipts() : null;
            String label = Results.label(value);
            Outcome<Object> first = inTxAny(key, A, codec, () -> value, true);
            assertThat(describe(first)).as(Promise.RESULT.broken("The first execution of work returning " + label)).isEqualTo("EXECUTED(" + label + ")");
            Outcome<Object> again = retryOfCommitted(key, codec, value, label);
            assertThat(describe(again)).as(Promise.RESULT.broken("The retry of work that returned " + label + " and committed"))
                    .isEqualTo("REPLAYED(" + label + ")");
        }
        IdempotencyKey none = IdempotencyKey.of("results", "none-codec");
        @SuppressWarnings("unchecked")
        ResultCodec<Object> noneCodec = (ResultCodec<Object>) (ResultCodec<?>) ResultCodec.none();
        inTxAny(none, A, noneCodec, () -> null, true);
        assertThat(describe(retryOfCommitted(none, noneCodec, null, "null through the codec none"))).as(Promise.RESULT.broken(
                "The retry of work run with the codec none")).isEqualTo("REPLAYED(null)");
    }

    /** The retry of a committed execution: a record still in progress there breaks the result promise, by name. */
    private Outcome<Object> retryOfCommitted(IdempotencyKey key, ResultCodec<Object> codec, Object value, String label) throws Exception {
        try {
            return inTxAny(key, A, codec, () -> value, false);
        } catch (AbandonedClaimException stillInProgress) {
            throw new AssertionError(Promise.RESULT.broken("The retry of work that returned " + label + " and committed found the"
                    + " record still in progress: " + stillInProgress.getMessage()), stillInProgress);
        }
    }

    /**
     * Contract 3.3 (docs/contract.md): a record in progress that an attempt can see is answered
     * with its own fingerprint: in the transaction that claimed it, a nested call of the same key
     * with another fingerprint gets Mismatch and one with the same fingerprint InProgress (or
     * NestedKeyException: the engine tells the transaction's own claim, met by its own work, from one
     * committed without its result); for a LeasingStore, a
     * committed lease claim (in progress, lease live) answers a transactional attempt the same way.
     * The engine compares the fingerprints: the store must hand back the record as it is, with its
     * own fingerprint.
     */
    @Test
    void inProgressRecordAnswersMismatchToAnotherFingerprint() throws Exception {
        Promise p = Promise.MISMATCH_IN_PROGRESS;
        IdempotencyKey key = IdempotencyKey.of("in-progress", "nested");
        Counting nested = new Counting("nested");
        AtomicReference<Outcome<String>> other = new AtomicReference<>();
        AtomicReference<Outcome<String>> same = new AtomicReference<>();
        AtomicReference<NestedKeyException> sameRefused = new AtomicReference<>();
        C tx = open();
        Outcome<String> outer;
        try {
            outer = idem.execute(IdempotentCall.of(key, A), tx, () -> {
                other.set(idem.execute(IdempotentCall.of(key, B), tx, nested));
                try {
                    same.set(idem.execute(IdempotentCall.of(key, A), tx, nested));
                } catch (NestedKeyException ownClaim) {
                    sameRefused.set(ownClaim); // the engine knows the claim is its own work's, not one committed without its result
                }
                return "outer";
            });
        } catch (Throwable t) {
            rollbackQuietly(tx, t);
            throw new AssertionError(p.broken("A nested execute of the key, in the transaction that claimed it, threw " + t), t);
        }
        commit(tx);
        assertOutcome(p, other.get(), Outcome.Status.MISMATCH, null);
        if (sameRefused.get() == null) {
            assertOutcome(p, same.get(), Outcome.Status.IN_PROGRESS, null);
        }
        assertThat(nested.runs()).as(p.broken("The nested call's work ran")).isZero();
        assertOutcome(p, outer, Outcome.Status.EXECUTED, "outer");
        assertOutcome(p, inTx(idem, key, A, new Counting("retry"), false), Outcome.Status.REPLAYED, "outer");
        if (store instanceof LeasingStore) {
            IdempotencyKey leased = IdempotencyKey.of("in-progress", "leased");
            leaseHeldFor(leased);
            assertOutcome(p, inTx(idem, leased, B, nested, false), Outcome.Status.MISMATCH, null);
            assertOutcome(p, inTx(idem, leased, A, nested, false), Outcome.Status.IN_PROGRESS, null);
            assertThat(nested.runs()).as(p.broken("The work ran on a key whose lease is live")).isZero();
        }
    }

    /**
     * Contract 8 and 2 (docs/contract.md): purge judges expiry to the millisecond, as claims do: a
     * record is kept 1 ms before its expiry, and removed at it.
     */
    @Test
    void purgeIsExactToTheMillisecond() throws Exception {
        IdempotencyKey key = IdempotencyKey.of("purge-edge", "k1");
        inTx(idem, key, A, new Counting("first"), true);
        clock.advance(RETENTION.minusMillis(1));
        assertThat(purge(10)).as(Promise.PURGE.broken("1 ms before the record's expiry, purge removed it")).isZero();
        assertOutcome(Promise.PURGE, inTx(idem, key, A, new Counting("x"), false), Outcome.Status.REPLAYED, "first");
        clock.advance(Duration.ofMillis(1));
        assertThat(purge(10)).as(Promise.PURGE.broken("At the record's exact expiry, purge must remove it")).isEqualTo(1);
        assertOutcome(Promise.PURGE, inTx(idem, key, A, new Counting("again"), false), Outcome.Status.EXECUTED, "again");
    }

    /**
     * Contract 8 (docs/contract.md): purging removes expired records only, in batches of at most
     * the limit, and counts them.
     */
    @Test
    void purgeRemovesOnlyExpiredRecordsAndReportsHowMany() throws Exception {
        for (int i = 0; i < 3; i++) {
            inTx(idem, IdempotencyKey.of("purge", "old-" + i), A, new Counting("old"), true);
        }
        clock.advance(RETENTION.dividedBy(2));
        for (int i = 0; i < 2; i++) {
            inTx(idem, IdempotencyKey.of("purge", "new-" + i), A, new Counting("new-" + i), true);
        }
        assertThat(purge(10)).as(Promise.PURGE.broken("Nothing has expired yet, but purge removed records")).isZero();
        clock.advance(RETENTION.dividedBy(2));
        assertThat(purge(2)).as(Promise.PURGE.broken("3 records expired (exactly now), purge with limit 2")).isEqualTo(2);
        assertThat(purge(2)).as(Promise.PURGE.broken("1 expired record left, purge with limit 2")).isEqualTo(1);
        assertThat(purge(2)).as(Promise.PURGE.broken("No expired record left")).isZero();
        for (int i = 0; i < 2; i++) {
            assertOutcome(Promise.PURGE, inTx(idem, IdempotencyKey.of("purge", "new-" + i), A, new Counting("x"), false),
                    Outcome.Status.REPLAYED, "new-" + i);
        }
    }

    // ---- chunks (docs/contract.md, section 9): claimAll and completeAll through executeChunk, one example per promise ----

    /**
     * Contract 9 (docs/contract.md): a chunk of new keys, given out of key order, runs each item
     * once and answers in input order; a retry of the committed chunk replays every item's own
     * result, running nothing.
     */
    @Test
    void chunkOfNewKeysRunsEachItemOnceAndItsRetryReplaysEveryItemInInputOrder() throws Exception {
        Promise p = Promise.CHUNK_ONCE;
        String[] ids = {"k3", "k1", "k4", "k2"};
        ItemRuns first = new ItemRuns();
        assertChunk(p, "The first run of a chunk of new keys", chunkInTx(p, items("chunk-once", A, "first-", ids), first, true),
                expected("EXECUTED", "first-", ids));
        for (String id : ids) {
            assertThat(first.of(id)).as(p.broken("The work of item " + id + " ran " + first.of(id) + " times")).isEqualTo(1);
        }
        ItemRuns retry = new ItemRuns();
        assertChunk(p, "The retry of the committed chunk", chunkInTx(p, items("chunk-once", A, "retry-", ids), retry, true),
                expected("REPLAYED", "first-", ids));
        assertThat(retry.total()).as(p.broken("The retry's work ran: " + retry)).isZero();
        for (String id : ids) {
            assertReplayed(p, IdempotencyKey.of("chunk-once", id), "first-" + id);
        }
    }

    /**
     * Contract 9 and 3.3 (docs/contract.md): one chunk holding a new key, a recorded one, one whose
     * record expired (exactly now) and one recorded with another fingerprint gives each its own
     * outcome.
     */
    @Test
    void chunkMixingRecordedNewExpiredAndMismatchingKeysGivesEachItsOwnOutcome() throws Exception {
        Promise p = Promise.CHUNK_OUTCOMES;
        IdempotencyKey recorded = IdempotencyKey.of("chunk-mixed", "a-recorded");
        IdempotencyKey mismatching = IdempotencyKey.of("chunk-mixed", "b-mismatching");
        IdempotencyKey expired = IdempotencyKey.of("chunk-mixed", "c-expired");
        IdempotencyKey fresh = IdempotencyKey.of("chunk-mixed", "d-new");
        inTx(idem, expired, A, new Counting("old"), true);
        clock.advance(RETENTION.dividedBy(2));
        inTx(idem, recorded, A, new Counting("recorded"), true);
        inTx(idem, mismatching, A, new Counting("other request"), true);
        clock.advance(RETENTION.dividedBy(2));
        List<Item> chunk = List.of(new Item(fresh, A, "new"), new Item(recorded, A, "x"), new Item(expired, A, "renewed"),
                new Item(mismatching, B, "x"));
        ItemRuns work = new ItemRuns();
        assertChunk(p, "A chunk of a new, a recorded, an expired and a mismatching key", chunkInTx(p, chunk, work, true),
                "EXECUTED(new)", "REPLAYED(recorded)", "EXECUTED(renewed)", "MISMATCH");
        assertThat(work.runs).as(p.broken("The work ran for other keys than the new and the expired one, or not once each"))
                .isEqualTo(Map.of("d-new", 1, "c-expired", 1));
        assertReplayed(p, fresh, "new");
        assertReplayed(p, expired, "renewed");
        assertReplayed(p, recorded, "recorded");
        assertReplayed(p, mismatching, "other request");
    }

    /**
     * Contract 9 and 3 (docs/contract.md): a chunk whose transaction rolled back leaves nothing;
     * its retry runs every item.
     */
    @Test
    void chunkRolledBackLeavesNothing() throws Exception {
        Promise p = Promise.CHUNK_ROLLBACK;
        String[] ids = {"k2", "k1", "k3"};
        assertChunk(p, "The chunk that is then rolled back", chunkInTx(p, items("chunk-rollback", A, "first-", ids), new ItemRuns(), false),
                expected("EXECUTED", "first-", ids));
        ItemRuns retry = new ItemRuns();
        assertChunk(p, "The retry of the rolled-back chunk", chunkInTx(p, items("chunk-rollback", A, "retry-", ids), retry, true),
                expected("EXECUTED", "retry-", ids));
        assertThat(retry.total()).as(p.broken("The retry's work did not run once per item: " + retry)).isEqualTo(ids.length);
        assertChunk(p, "The chunk once more", chunkInTx(p, items("chunk-rollback", A, "x-", ids), new ItemRuns(), false),
                expected("REPLAYED", "retry-", ids));
    }

    /**
     * Contract 9 and 3.3 (docs/contract.md): a chunk whose keys an open transaction holds (claimed
     * by a chunk of its own) waits for it; once the holder commits, the chunk replays the holder's
     * results and runs only its key that nobody held.
     */
    @Test
    void chunkWhoseKeysAnOpenTransactionHoldsWaitsAndReplaysOnceItCommits() throws Exception {
        Promise p = Promise.CHUNK_HOLDER;
        List<Item> held = items("chunk-holder", A, "holder-", "k2", "k1");
        C holder = open();
        boolean open = true;
        try {
            List<Outcome<String>> claimed;
            try {
                claimed = idem.executeChunk(holder, held, Item::call, new ItemRuns());
            } catch (RuntimeException e) {
                throw new AssertionError(p.broken("The holder's executeChunk threw " + e), e);
            }
            assertChunk(p, "The holder's chunk", claimed, "EXECUTED(holder-k2)", "EXECUTED(holder-k1)");
            List<Item> waiting = items("chunk-holder", A, "waiter-", "k0", "k2", "k1");
            ItemRuns waiterWork = new ItemRuns();
            Future<List<Outcome<String>>> waiter = threads.submit(() -> chunkInTx(p, waiting, waiterWork, true));
            // Let the waiter reach the store before the holder ends; the expected outcomes are the same if it does not.
            Thread.sleep(100);
            open = false;
            commit(holder);
            assertChunk(p, "The chunk that met the holder", await(p, waiter), "EXECUTED(waiter-k0)", "REPLAYED(holder-k2)",
                    "REPLAYED(holder-k1)");
            assertThat(waiterWork.of("k1") + waiterWork.of("k2")).as(p.broken("The waiter's work ran for a held key: " + waiterWork)).isZero();
        } finally {
            if (open) {
                rollback(holder);
            }
        }
    }

    /**
     * Contract 9 and 3.3 (docs/contract.md): an open transaction holds one key of a chunk past the
     * chunk's lock timeout. That item answers InProgress and its work does not run; the chunk does
     * not fail (on a database where a failed statement aborts the transaction, the store must claim
     * that key so that the transaction survives); the other items run, or answer InProgress where
     * the store locks more than the key; the chunk's transaction commits, and once the holder has
     * committed a rerun replays every item.
     */
    @Test
    void chunkWithAKeyHeldPastTheLockTimeoutAnswersInProgressForItAndCommitsTheRest() throws Exception {
        Promise p = Promise.CHUNK_LOCK_TIMEOUT;
        C holder = open();
        boolean open = true;
        try {
            List<Outcome<String>> held;
            try {
                held = idem.executeChunk(holder, items("chunk-held", A, "holder-", "k1"), Item::call, new ItemRuns());
            } catch (RuntimeException e) {
                throw new AssertionError(p.broken("The holder's executeChunk threw " + e), e);
            }
            assertChunk(p, "The holder's chunk", held, "EXECUTED(holder-k1)");
            List<Item> waiting = items("chunk-held", A, "waiter-", "k0", "k1", "k2");
            ItemRuns waiterWork = new ItemRuns();
            Duration bound = lockWaitBound(SHORT_LOCK_TIMEOUT).multipliedBy(waiting.size());
            Future<List<Outcome<String>>> waiter = threads.submit(() -> chunkInTx(p, impatient, waiting, waiterWork, true));
            List<Outcome<String>> waited;
            try {
                waited = waiter.get(bound.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                throw new AssertionError(p.broken("With a lock timeout of " + SHORT_LOCK_TIMEOUT.toMillis() + " ms the chunk of "
                        + waiting.size() + " keys was still waiting after " + bound.toMillis() + " ms"), e);
            } catch (ExecutionException e) {
                throw e.getCause() instanceof AssertionError a ? a : new AssertionError(p.broken("The chunk failed: " + e.getCause()), e.getCause());
            }
            assertThat(waited).as(p.broken("one outcome per item")).hasSize(3);
            assertThat(describe(waited.get(1))).as(p.broken("The held key's outcome")).isEqualTo("IN_PROGRESS");
            assertThat(waiterWork.of("k1")).as(p.broken("The work ran for the held key: " + waiterWork)).isZero();
            for (int i : new int[] {0, 2}) {
                assertThat(describe(waited.get(i))).as(p.broken("A free key's outcome"))
                        .isIn("EXECUTED(waiter-" + waiting.get(i).key().id() + ")", "IN_PROGRESS");
            }
            open = false;
            commit(holder);
            List<Outcome<String>> rerun = chunkInTx(p, waiting, new ItemRuns(), true);
            assertThat(describe(rerun.get(1))).as(p.broken("The held key, once its holder committed")).isEqualTo("REPLAYED(holder-k1)");
            for (int i : new int[] {0, 2}) {
                String id = waiting.get(i).key().id();
                String expected = describe(waited.get(i)).startsWith("EXECUTED") ? "REPLAYED(waiter-" + id + ")" : "EXECUTED(waiter-" + id + ")";
                assertThat(describe(rerun.get(i))).as(p.broken("A free key in the rerun")).isEqualTo(expected);
            }
        } finally {
            if (open) {
                rollback(holder);
            }
        }
    }

    /**
     * Contract 9 (docs/contract.md): a chunk with a key twice is refused with
     * DuplicateKeyInChunkException, even if the caller commits: nothing runs and nothing is
     * written.
     */
    @Test
    void chunkWithADuplicateKeyIsRefusedWithNothingWritten() throws Exception {
        Promise p = Promise.CHUNK_DUPLICATE;
        IdempotencyKey one = IdempotencyKey.of("chunk-duplicate", "k1");
        IdempotencyKey two = IdempotencyKey.of("chunk-duplicate", "k2");
        List<Item> chunk = List.of(new Item(one, A, "one"), new Item(two, A, "two"), new Item(one, A, "again"));
        ItemRuns work = new ItemRuns();
        C tx = open();
        Throwable thrown = catchThrowable(() -> idem.executeChunk(tx, chunk, Item::call, work));
        commit(tx);
        assertThat(thrown).as(p.broken("executeChunk " + (thrown == null ? "ran" : "threw " + thrown)))
                .isInstanceOf(DuplicateKeyInChunkException.class);
        assertThat(work.total()).as(p.broken("The work ran: " + work)).isZero();
        ItemRuns retry = new ItemRuns();
        assertChunk(p, "The chunk without the duplicate", chunkInTx(p, chunk.subList(0, 2), retry, true), "EXECUTED(one)", "EXECUTED(two)");
    }

    /**
     * Contract 9 and 3.4 (docs/contract.md): a final failure of the middle item is recorded for it
     * alone, without its partial write (a store write: it executes another key in the chunk's
     * transaction); the items around it are recorded, and a retry replays each item's own outcome.
     */
    @Test
    void finalFailureOfOneItemInAChunkIsRecordedForThatItemAlone() throws Exception {
        Promise p = Promise.CHUNK_FINAL_FAILURE;
        IdempotencyKey partial = IdempotencyKey.of("chunk-final-failure", "partial");
        List<Item> chunk = items("chunk-final-failure", A, "v-", "k1", "k2", "k3");
        ItemRuns counted = new ItemRuns();
        C tx = open();
        List<Outcome<String>> first;
        try {
            first = idem.executeChunk(tx, chunk, Item::call, item -> {
                String value = counted.apply(item);
                if (item.key().id().equals("k2")) {
                    idem.execute(IdempotentCall.of(partial, A), tx, () -> "partial write");
                    throw new FinalFailure("card declined");
                }
                return value;
            });
        } catch (Throwable t) {
            rollbackQuietly(tx, t);
            throw new AssertionError(p.broken("executeChunk threw " + t), t);
        }
        commit(tx);
        assertChunk(p, "The chunk whose item k2 failed finally", first, "EXECUTED(v-k1)", "FAILED(card declined, new)", "EXECUTED(v-k3)");
        ItemRuns retry = new ItemRuns();
        assertChunk(p, "The retry of the committed chunk", chunkInTx(p, items("chunk-final-failure", A, "r-", "k1", "k2", "k3"), retry, true),
                "REPLAYED(v-k1)", "FAILED(card declined, replayed)", "REPLAYED(v-k3)");
        assertThat(retry.total()).as(p.broken("The retry's work ran: " + retry)).isZero();
        assertOutcome(p, inTx(idem, partial, A, new Counting("partial again"), true), Outcome.Status.EXECUTED, "partial again");
    }

    /** An item of a chunk: its key, its request fingerprint, and what its work returns. */
    private record Item(IdempotencyKey key, Fingerprint fingerprint, String value) {
        IdempotentCall<String> call() {
            return IdempotentCall.of(key, ResultCodec.string()).withFingerprint(fingerprint);
        }

        @Override
        public String toString() {
            return key.scope() + "/" + key.id();
        }
    }

    /** Item work that returns the item's value and counts the runs per key id. */
    private static final class ItemRuns implements ItemWork<Item, String, RuntimeException> {
        private final Map<String, Integer> runs = new java.util.concurrent.ConcurrentHashMap<>();

        @Override
        public String apply(Item item) {
            runs.merge(item.key().id(), 1, Integer::sum);
            return item.value();
        }

        int of(String id) {
            return runs.getOrDefault(id, 0);
        }

        int total() {
            return runs.values().stream().mapToInt(Integer::intValue).sum();
        }

        @Override
        public String toString() {
            return "runs per key " + runs;
        }
    }

    /** Items of one scope and fingerprint, in the order given, each returning {@code prefix + id}. */
    private static List<Item> items(String scope, Fingerprint fp, String prefix, String... ids) {
        List<Item> items = new ArrayList<>(ids.length);
        for (String id : ids) {
            items.add(new Item(IdempotencyKey.of(scope, id), fp, prefix + id));
        }
        return items;
    }

    /** The described outcomes {@code STATUS(prefix + id)}, one per id, in order. */
    private static String[] expected(String status, String prefix, String... ids) {
        return Arrays.stream(ids).map(id -> status + "(" + prefix + id + ")").toArray(String[]::new);
    }

    /**
     * Runs one chunk in a transaction of its own and commits it or rolls it back; an exception of
     * executeChunk (of the store under it) breaks {@code promise}.
     */
    private List<Outcome<String>> chunkInTx(Promise promise, List<Item> items, ItemWork<Item, String, RuntimeException> work, boolean commit)
            throws Exception {
        return chunkInTx(promise, idem, items, work, commit);
    }

    /** As {@link #chunkInTx(Promise, List, ItemWork, boolean)}, through {@code engine}. */
    private List<Outcome<String>> chunkInTx(Promise promise, Idempotency<C> engine, List<Item> items,
                                            ItemWork<Item, String, RuntimeException> work, boolean commit) throws Exception {
        C tx = open();
        List<Outcome<String>> outcomes;
        try {
            outcomes = engine.executeChunk(tx, items, Item::call, work);
        } catch (Throwable t) {
            rollbackQuietly(tx, t);
            throw new AssertionError(promise.broken("executeChunk of " + items + " threw " + t), t);
        }
        if (commit) {
            commit(tx);
        } else {
            rollback(tx);
        }
        return outcomes;
    }

    /** A retry of {@code key} alone, rolled back, replays {@code value}; a record found still in progress breaks {@code promise}. */
    // ---- write-last: IdempotencyStore.writeLast ------------------------------------------------------

    /**
     * The store's write-last primitive: the completed record is written only where the key has no
     * unexpired record, holds only once committed, and the normal mode replays it.
     */
    @Test
    void writeLastWritesOnlyANewKeyAndHoldsOnlyOnceCommitted() throws Exception {
        Promise p = Promise.WRITE_LAST;
        IdempotencyKey key = IdempotencyKey.of("write-last", "k1");
        assertThat(writeLast(key, A, "rolled-back", false)).as(p.broken("A first write was not written")).isInstanceOf(Claim.Acquired.class);
        assertThat(writeLast(key, A, "first", true)).as(p.broken("A write after a rolled-back one was refused: the rolled-back"
                + " record was kept")).isInstanceOf(Claim.Acquired.class);
        Claim second = writeLast(key, B, "second", false);
        assertThat(second).as(p.broken("A second write of a recorded key was not refused with the record")).isInstanceOf(Claim.Existing.class);
        StoredRecord found = ((Claim.Existing) second).record();
        assertThat(found.status()).as(p.broken("The record found")).isEqualTo(RecordStatus.COMPLETED);
        assertThat(found.fingerprint()).as(p.broken("The record found has another fingerprint")).isEqualTo(A);
        assertThat(new String(found.result(), StandardCharsets.UTF_8)).as(p.broken("The record found has another result")).isEqualTo("first");
        assertOutcome(p, inTx(idem, key, A, new Counting("retry"), true), Outcome.Status.REPLAYED, "first");
    }

    /** An expired record is replaced by the write, in the same call. */
    @Test
    void writeLastReplacesAnExpiredRecord() throws Exception {
        Promise p = Promise.WRITE_LAST;
        IdempotencyKey key = IdempotencyKey.of("write-last", "expired");
        writeLast(key, A, "first", true);
        clock.advance(RETENTION);
        assertThat(writeLast(key, B, "late", true)).as(p.broken("The write over an expired record was refused"))
                .isInstanceOf(Claim.Acquired.class);
        assertOutcome(p, inTx(idem, key, B, new Counting("retry"), true), Outcome.Status.REPLAYED, "late");
    }

    /** A write waits for an open transaction that holds the key, then finds its record, or writes if it rolled back. */
    @Test
    void writeLastWaitsForAnOpenHolderOfTheKey() throws Exception {
        Promise p = Promise.WRITE_LAST;
        for (boolean holderCommits : List.of(true, false)) {
            IdempotencyKey key = IdempotencyKey.of("write-last", holderCommits ? "holder-commits" : "holder-rolls-back");
            C holder = open();
            Future<Claim> waiter;
            try {
                assertOutcome(p, idem.execute(IdempotentCall.of(key, A), holder, new Counting("holder")), Outcome.Status.EXECUTED, "holder");
                waiter = threads.submit(() -> writeLast(key, A, "waiter", true));
                Thread.sleep(100); // lets the waiter reach the store; the answer is the same if it does not
            } catch (Throwable t) {
                rollbackQuietly(holder, t);
                throw t;
            }
            if (holderCommits) {
                commit(holder);
                assertThat(await(p, waiter)).as(p.broken("A write that met an open holder which then committed was not refused"))
                        .isInstanceOf(Claim.Existing.class);
                assertOutcome(p, inTx(idem, key, A, new Counting("retry"), true), Outcome.Status.REPLAYED, "holder");
            } else {
                rollback(holder);
                assertThat(await(p, waiter)).as(p.broken("A write that met an open holder which then rolled back was refused"))
                        .isInstanceOf(Claim.Acquired.class);
                assertOutcome(p, inTx(idem, key, A, new Counting("retry"), true), Outcome.Status.REPLAYED, "waiter");
            }
        }
    }

    /** One {@link IdempotencyStore#writeLast} of a string result, in a transaction of its own, committed if written and asked to. */
    private Claim writeLast(IdempotencyKey key, Fingerprint fingerprint, String value, boolean commit) throws Exception {
        Instant now = clock.instant();
        ResultCodec<String> codec = ResultCodec.string();
        ClaimRequest request = new ClaimRequest(key, fingerprint, now, now.plus(RETENTION), LOCK_TIMEOUT);
        Completion done = new Completion(key, RecordStatus.COMPLETED, codec.name(), codec.encode(value), now, now.plus(RETENTION));
        C tx = open();
        Claim claim;
        try {
            claim = store.writeLast(tx, request, done);
        } catch (Throwable t) {
            rollbackQuietly(tx, t);
            throw t;
        }
        if (commit && claim instanceof Claim.Acquired) {
            commit(tx);
        } else {
            rollback(tx);
        }
        return claim;
    }

    private void assertReplayed(Promise promise, IdempotencyKey key, String value) throws Exception {
        Outcome<String> outcome;
        try {
            outcome = inTx(idem, key, A, new Counting("x"), false);
        } catch (AbandonedClaimException stillInProgress) {
            throw new AssertionError(promise.broken("A retry of " + key + " alone, after the chunk committed, found its record still in"
                    + " progress: " + stillInProgress.getMessage()), stillInProgress);
        }
        assertOutcome(promise, outcome, Outcome.Status.REPLAYED, value);
    }

    private static void assertChunk(Promise promise, String what, List<Outcome<String>> outcomes, String... expected) {
        List<String> seen = outcomes.stream().map(IdempotencyStoreContract::describe).toList();
        assertThat(seen).as(promise.broken(what + ": expected the outcomes " + List.of(expected) + ", in input order; got " + seen))
                .containsExactly(expected);
    }

    // ---- lease mode: the store's primitives, one example per promise ---------------------------------

    /**
     * Contract 4.1 (docs/contract.md): a new key is claimed as attempt 1; the claim holds once
     * committed, and a rolled-back one leaves nothing.
     */
    @Test
    void newKeyIsClaimedAsAttemptOneAndHoldsOnlyOnceCommitted() throws Exception {
        Promise p = Promise.LEASE_NEW;
        IdempotencyKey key = IdempotencyKey.of("lease-new", "k1");
        acquired(p, claimLease(key, A, "rolled-back", LIVE_LEASE, false), 1, null);
        LeaseClaim.Acquired first = acquired(p, claimLease(key, A, "owner-1", LIVE_LEASE, true), 1, null);
        assertThat(first.leaseUntil()).as(p.broken("The lease of a claim at " + first.now() + " for " + LIVE_LEASE + " must end at its now"
                + " plus the lease")).isEqualTo(first.now().plus(LIVE_LEASE));
        held(p, claimLease(key, A, "owner-2", LIVE_LEASE, true), A, first.leaseUntil(), 1);
        assertThat(changed(tx -> leasing().releaseLease(tx, key, "rolled-back"))).as(p.broken("The rolled-back claim's owner token"
                + " released the lease of the committed claim")).isFalse();
    }

    /**
     * Contract 4.1 (docs/contract.md): a lease claim waits for an open transaction that claimed the
     * key, then sees its claim, or claims itself.
     */
    @Test
    void leaseClaimWaitsForAnOpenClaimOfTheKey() throws Exception {
        Promise p = Promise.LEASE_ATOMIC;
        for (boolean holderCommits : List.of(true, false)) {
            IdempotencyKey key = IdempotencyKey.of("lease-atomic", holderCommits ? "commits" : "rolls-back");
            C holder = open();
            LeaseClaim.Acquired held;
            Future<LeaseClaim> waiter;
            try {
                held = acquired(p, leasing().claimLease(holder, request(key, A, "holder", LIVE_LEASE)), 1, null);
                waiter = threads.submit(() -> claimLease(key, A, "waiter", LIVE_LEASE, true));
                Thread.sleep(100); // lets the waiter reach the store; the answer is the same if it does not
            } catch (Throwable t) {
                rollbackQuietly(holder, t);
                throw t;
            }
            if (holderCommits) {
                commit(holder);
                held(p, await(p, waiter), A, held.leaseUntil(), 1);
            } else {
                rollback(holder);
                acquired(p, await(p, waiter), 1, null);
            }
        }
    }

    /**
     * Contract 4.2 (docs/contract.md): a live lease is never taken over; the claimant gets Held
     * with the lease's end.
     */
    @Test
    void liveLeaseIsNeverTakenOver() throws Exception {
        Promise p = Promise.LEASE_LIVE;
        IdempotencyKey key = IdempotencyKey.of("lease-live", "k1");
        LeaseClaim.Acquired first = acquired(p, claimLease(key, A, "owner-1", LIVE_LEASE, true), 1, null);
        held(p, claimLease(key, A, "owner-2", LIVE_LEASE, true), A, first.leaseUntil(), 1);
        held(p, claimLease(key, A, "owner-3", SHORT_LEASE, true), A, first.leaseUntil(), 1);
        assertThat(complete(key, "owner-1", "first")).as(p.broken("The holder could not complete after others asked for its key"))
                .isPresent();
        found(p, claimLease(key, A, "owner-4", LIVE_LEASE, true), A, RecordStatus.COMPLETED, "first");
    }

    /**
     * Contract 4.5 (docs/contract.md): a lease that ended is taken over by the next claim, counting
     * attempts 2, 3, ...
     */
    @Test
    void endedLeaseIsTakenOverCountingAttempts() throws Exception {
        Promise p = Promise.LEASE_TAKE_OVER;
        IdempotencyKey key = IdempotencyKey.of("lease-take-over", "k1");
        acquired(p, claimLease(key, A, "owner-1", SHORT_LEASE, true), 1, null);
        letLeaseRunOut(SHORT_LEASE);
        acquired(p, claimLease(key, A, "owner-2", SHORT_LEASE, true), 2, null);
        letLeaseRunOut(SHORT_LEASE);
        LeaseClaim.Acquired third = acquired(p, claimLease(key, A, "owner-3", LIVE_LEASE, true), 3, null);
        assertThat(third.leaseUntil()).as(p.broken("The lease of a take-over at " + third.now() + " for " + LIVE_LEASE + " must end at"
                + " its now plus the lease")).isEqualTo(third.now().plus(LIVE_LEASE));
        held(p, claimLease(key, A, "owner-4", LIVE_LEASE, true), A, third.leaseUntil(), 3);
    }

    /**
     * Contract 4.2 (docs/contract.md): a record in progress with another fingerprint is never taken
     * over, even after its lease ended.
     */
    @Test
    void inProgressRecordWithAnotherFingerprintIsNeverTakenOver() throws Exception {
        Promise p = Promise.LEASE_MISMATCH;
        IdempotencyKey key = IdempotencyKey.of("lease-mismatch", "k1");
        LeaseClaim.Acquired first = acquired(p, claimLease(key, A, "owner-1", SHORT_LEASE, true), 1, null);
        letLeaseRunOut(SHORT_LEASE);
        held(p, claimLease(key, B, "owner-2", LIVE_LEASE, true), A, first.leaseUntil(), 1);
        acquired(p, claimLease(key, A, "owner-3", LIVE_LEASE, true), 2, null);
        Outcome<String> other = managed(LeasePolicy.DEFAULT_LEASE).lease(IdempotentCall.of(key, ResultCodec.string()).withFingerprint(B), attempt -> "other");
        assertOutcome(p, other, Outcome.Status.MISMATCH, null);
    }

    /**
     * Contract 4.4 (docs/contract.md): after a take-over, the old owner's extend, checkpoint,
     * complete and release change nothing and say so; the new owner's recovery point and result
     * stand.
     */
    @Test
    void fencedWritesWithAStaleOwnerTokenChangeNothing() throws Exception {
        Promise p = Promise.FENCING;
        IdempotencyKey key = IdempotencyKey.of("lease-fencing", "k1");
        RecoveryPoint kept = point("prepared by owner-1");
        acquired(p, claimLease(key, A, "owner-1", SHORT_LEASE, true, kept), 1, null);
        letLeaseRunOut(SHORT_LEASE);
        LeaseClaim.Acquired second = acquired(p, claimLease(key, A, "owner-2", LIVE_LEASE, true), 2, kept);
        LeasingStore<C> s = leasing();
        assertThat(ended(tx -> s.extendLease(tx, key, "owner-1", LIVE_LEASE.multipliedBy(2))))
                .as(p.broken("extendLease with the taken-over owner token reported a new lease end")).isEmpty();
        assertThat(changed(tx -> s.checkpoint(tx, key, "owner-1", point("stale")))).as(p.broken("checkpoint with the taken-over owner token"
                + " reported a recovery point recorded")).isFalse();
        assertThat(changed(tx -> s.releaseLease(tx, key, "owner-1"))).as(p.broken("releaseLease with the taken-over owner token reported"
                + " the lease ended")).isFalse();
        assertThat(complete(key, "owner-1", "stale")).as(p.broken("completeLeased with the taken-over owner token reported the result"
                + " recorded")).isEmpty();
        held(p, claimLease(key, A, "owner-3", LIVE_LEASE, true), A, second.leaseUntil(), 2);
        assertThat(changed(tx -> s.releaseLease(tx, key, "owner-2"))).as(p.broken("The holder could not release its lease")).isTrue();
        acquired(p, claimLease(key, A, "owner-4", LIVE_LEASE, true), 3, kept);
        assertThat(complete(key, "owner-4", "new owner")).as(p.broken("The holder could not complete")).isPresent();
        assertThat(complete(key, "owner-1", "stale")).as(p.broken("completeLeased with a taken-over owner token reported the result"
                + " recorded over the holder's")).isEmpty();
        found(p, claimLease(key, A, "owner-5", LIVE_LEASE, true), A, RecordStatus.COMPLETED, "new owner");
    }

    /**
     * Contract 4.5 (docs/contract.md): release ends the lease at once; the next claim takes over,
     * with attempts counted and the recovery point kept.
     */
    @Test
    void releaseEndsTheLeaseAtOnceKeepingAttemptsAndRecoveryPoint() throws Exception {
        Promise p = Promise.LEASE_RELEASE;
        IdempotencyKey key = IdempotencyKey.of("lease-release", "k1");
        RecoveryPoint prepared = point("prepared");
        acquired(p, claimLease(key, A, "owner-1", LIVE_LEASE, true, prepared), 1, null);
        assertThat(changed(tx -> leasing().releaseLease(tx, key, "owner-1"))).as(p.broken("The holder's release reported nothing done"))
                .isTrue();
        acquired(p, claimLease(key, A, "owner-2", LIVE_LEASE, true), 2, prepared);
    }

    /**
     * Contract 4.7 (docs/contract.md): the recovery point is handed to every later owner unchanged;
     * only a committed checkpoint replaces it; neither a take-over nor a release clears it or sets
     * it back.
     */
    @Test
    void recoveryPointIsHandedOnUnchangedAndNeverGoesBack() throws Exception {
        Promise p = Promise.RECOVERY_POINT;
        IdempotencyKey key = IdempotencyKey.of("lease-recovery", "k1");
        RecoveryPoint one = point("one");
        RecoveryPoint two = new RecoveryPoint("contract-codec", null);
        acquired(p, claimLease(key, A, "owner-1", SHORT_LEASE, true, one), 1, null);
        assertThat(changed(tx -> leasing().checkpoint(tx, key, "owner-1", two))).as(p.broken("The holder's checkpoint was refused")).isTrue();
        letLeaseRunOut(SHORT_LEASE);
        acquired(p, claimLease(key, A, "owner-2", SHORT_LEASE, true), 2, two);
        letLeaseRunOut(SHORT_LEASE);
        acquired(p, claimLease(key, A, "owner-3", LIVE_LEASE, true), 3, two);
        C tx = open();
        try {
            assertThat(leasing().checkpoint(tx, key, "owner-3", point("rolled back"))).as(p.broken("The holder's checkpoint was refused")).isTrue();
        } finally {
            rollback(tx);
        }
        assertThat(changed(t -> leasing().releaseLease(t, key, "owner-3"))).as(p.broken("The holder's release was refused")).isTrue();
        acquired(p, claimLease(key, A, "owner-4", LIVE_LEASE, true), 4, two);
        RecoveryPoint three = point("three");
        assertThat(changed(t -> leasing().checkpoint(t, key, "owner-4", three))).as(p.broken("The holder's checkpoint was refused")).isTrue();
        assertThat(changed(t -> leasing().releaseLease(t, key, "owner-4"))).as(p.broken("The holder's release was refused")).isTrue();
        acquired(p, claimLease(key, A, "owner-5", LIVE_LEASE, true), 5, three);
    }

    /**
     * Contract 4.1 (docs/contract.md): a completed or failed record is Existing, with what
     * completeLeased recorded, whatever the fingerprint.
     */
    @Test
    void completedOrFailedRecordIsFound() throws Exception {
        Promise p = Promise.LEASE_FOUND;
        for (RecordStatus status : List.of(RecordStatus.COMPLETED, RecordStatus.FAILED)) {
            IdempotencyKey key = IdempotencyKey.of("lease-found", status.name());
            acquired(p, claimLease(key, A, "owner-1", LIVE_LEASE, true), 1, null);
            Instant completedAt = ended(tx -> leasing().completeLeased(tx, "owner-1", new LeasedCompletion(key, status, "contract-codec",
                    bytes("result"), RETENTION))).orElseThrow(() -> new AssertionError(p.broken("The holder could not complete")));
            StoredRecord r = found(p, claimLease(key, A, "owner-2", LIVE_LEASE, true), A, status, "result");
            assertThat(r.completedAt()).as(p.broken("The Existing record's completion time")).isEqualTo(completedAt);
            assertThat(r.expiresAt()).as(p.broken("The Existing record's expiry (completion plus retention)")).isEqualTo(completedAt.plus(RETENTION));
            found(p, claimLease(key, B, "owner-3", LIVE_LEASE, true), A, status, "result");
        }
    }

    /**
     * Contract 4.1 (docs/contract.md): a record whose retention has run out is claimed anew as
     * attempt 1, with no recovery point.
     */
    @Test
    void expiredRecordIsClaimedAnewAsAttemptOne() throws Exception {
        Promise p = Promise.LEASE_EXPIRED;
        IdempotencyKey key = IdempotencyKey.of("lease-expired", "k1");
        acquired(p, claimLease(key, A, "owner-1", SHORT_LEASE, true, point("old life")), 1, null);
        letLeaseRunOut(SHORT_LEASE);
        acquired(p, claimLease(key, A, "owner-2", LIVE_LEASE, true), 2, point("old life"));
        assertThat(ended(tx -> leasing().completeLeased(tx, "owner-2", new LeasedCompletion(key, RecordStatus.COMPLETED, "contract-codec",
                bytes("old"), SHORT_LEASE)))).as(p.broken("The holder could not complete")).isPresent();
        letLeaseRunOut(SHORT_LEASE);
        acquired(p, claimLease(key, B, "owner-3", LIVE_LEASE, true), 1, null);
    }

    /**
     * Contract 4.3 (docs/contract.md): extendLease moves the end of the holder's lease forward, and
     * a claim then sees the new end.
     */
    @Test
    void extendMovesTheLeaseEndForward() throws Exception {
        Promise p = Promise.LEASE_EXTEND;
        IdempotencyKey key = IdempotencyKey.of("lease-extend", "k1");
        LeaseClaim.Acquired first = acquired(p, claimLease(key, A, "owner-1", SHORT_LEASE, true), 1, null);
        Instant extended = ended(tx -> leasing().extendLease(tx, key, "owner-1", LIVE_LEASE))
                .orElseThrow(() -> new AssertionError(p.broken("The holder's extension was refused")));
        assertThat(extended).as(p.broken("The extended lease must end after the claimed one, " + first.leaseUntil())).isAfter(first.leaseUntil());
        letLeaseRunOut(SHORT_LEASE);
        held(p, claimLease(key, A, "owner-2", LIVE_LEASE, true), A, extended, 1);
    }

    // ---- lease mode through the engine --------------------------------------------------------------

    /** Contract 4 (docs/contract.md): a leased call runs once; every retry replays its result. */
    @Test
    void leasedCallRunsOnceAndReplays() throws Exception {
        Promise p = Promise.LEASED_CALL;
        IdempotencyKey key = IdempotencyKey.of("leased", "once");
        ManagedIdempotency<C> managed = managed(LeasePolicy.DEFAULT_LEASE);
        AtomicInteger calls = new AtomicInteger();
        LeasedWork<String, RuntimeException> call = attempt -> "charged " + calls.incrementAndGet() + " on attempt " + attempt.number();
        assertOutcome(p, managed.lease(IdempotentCall.of(key, ResultCodec.string()).withFingerprint(A), call), Outcome.Status.EXECUTED, "charged 1 on attempt 1");
        assertOutcome(p, managed.lease(IdempotentCall.of(key, ResultCodec.string()).withFingerprint(A), call), Outcome.Status.REPLAYED, "charged 1 on attempt 1");
        assertThat(calls.get()).as(p.broken("The call ran again")).isEqualTo(1);
    }

    /**
     * Contract 4 (docs/contract.md): a call that throws (not final) passes its exception through
     * and leaves the key claimable at once.
     */
    @Test
    void leasedCallThatThrowsLeavesTheKeyClaimableAtOnce() throws Exception {
        Promise p = Promise.LEASED_CALL_THROWS;
        IdempotencyKey key = IdempotencyKey.of("leased", "throws");
        ManagedIdempotency<C> managed = managed(LIVE_LEASE);
        PlainFailure thrown = new PlainFailure("provider timed out");
        Throwable caught = catchThrowable(() -> managed.lease(IdempotentCall.of(key, ResultCodec.string()).withFingerprint(A), attempt -> {
            throw thrown;
        }));
        assertThat(caught).as(p.broken("The caller did not get the call's own exception")).isSameAs(thrown);
        Outcome<String> retried = managed.lease(IdempotentCall.of(key, ResultCodec.string()).withFingerprint(A), attempt -> "retried on attempt " + attempt.number());
        assertOutcome(p, retried, Outcome.Status.EXECUTED, "retried on attempt 2");
    }

    /**
     * Contract 4 (docs/contract.md): a final failure of the call is recorded and replayed; the call
     * does not run again.
     */
    @Test
    void leasedFinalFailureIsRecordedAndReplayed() throws Exception {
        Promise p = Promise.LEASED_FINAL_FAILURE;
        IdempotencyKey key = IdempotencyKey.of("leased", "final-failure");
        ManagedIdempotency<C> managed = managed(LeasePolicy.DEFAULT_LEASE);
        AtomicInteger calls = new AtomicInteger();
        LeasedWork<String, RuntimeException> declined = attempt -> {
            calls.incrementAndGet();
            throw new FinalFailure("card declined");
        };
        Outcome<String> first = managed.lease(IdempotentCall.of(key, ResultCodec.string()).withFingerprint(A), declined);
        assertThat(first).as(p.broken("The first attempt's outcome")).isInstanceOfSatisfying(Outcome.Failed.class,
                f -> assertThat(f.replayed()).as(p.broken("The first failure is marked replayed")).isFalse());
        Outcome<String> again = managed.lease(IdempotentCall.of(key, ResultCodec.string()).withFingerprint(A), declined);
        assertThat(again).as(p.broken("The retry's outcome")).isInstanceOf(Outcome.Failed.class);
        Outcome.Failed<String> failed = (Outcome.Failed<String>) again;
        assertThat(failed.replayed()).as(p.broken("The retry's failure is not marked replayed")).isTrue();
        assertThat(failed.errorMessage()).as(p.broken("The replayed failure's message")).isEqualTo("card declined");
        assertThat(calls.get()).as(p.broken("The call ran again")).isEqualTo(1);
    }

    /**
     * Contract 4 (docs/contract.md): after a crash once the claim and its prepare phase committed
     * (an attempt that stops without releasing its lease), the next attempt takes the claim over
     * when the lease ends, does not run prepare again, and its call receives the recorded value.
     */
    @Test
    void crashAfterPrepareResumesWithTheRecordedValue() throws Exception {
        Promise p = Promise.LEASED_RESUME;
        IdempotencyKey key = IdempotencyKey.of("leased", "resume");
        ResultCodec<String> codec = ResultCodec.string();
        claimLease(key, A, "crashed", SHORT_LEASE, true, new RecoveryPoint(codec.name(), codec.encode("charge #42 pending")));
        letLeaseRunOut(SHORT_LEASE);
        AtomicInteger prepares = new AtomicInteger();
        AtomicReference<String> resumed = new AtomicReference<>();
        Phases<C, String, RuntimeException> charge = Phases.<C, String, RuntimeException>prepare(tx -> "charge #" + prepares.incrementAndGet()
                + " pending (prepared again)", codec).<String>call((attempt, prepared) -> {
                    resumed.set("attempt " + attempt.number() + (attempt.resumed() ? ", resumed" : ", not resumed") + ", given " + prepared);
                    return "paid " + prepared;
                }).result(codec);
        Outcome<String> outcome = managed(LeasePolicy.DEFAULT_LEASE).run(IdempotentCall.of(key, A), charge);
        assertThat(prepares.get()).as(p.broken("prepare ran again")).isZero();
        assertThat(resumed.get()).as(p.broken("What the call saw")).isEqualTo("attempt 2, resumed, given charge #42 pending");
        assertOutcome(p, outcome, Outcome.Status.EXECUTED, "paid charge #42 pending");
    }

    /**
     * Contract 4 (docs/contract.md): an attempt whose lease ran out and was taken over (here by a
     * claim of another owner while its call ran) gets LeaseLostException when it finishes; its
     * finishing writes are rolled back, and the new owner's result stands.
     */
    @Test
    void staleOwnerGetsLeaseLostAndItsFinishIsNotRecorded() throws Exception {
        Promise p = Promise.LEASE_LOST;
        IdempotencyKey key = IdempotencyKey.of("leased", "lost");
        IdempotencyKey finishWrite = IdempotencyKey.of("leased", "lost-finish-write");
        ManagedIdempotency<C> managed = managed(ENGINE_SHORT_LEASE);
        AtomicReference<LeaseClaim> takeOver = new AtomicReference<>();
        Phases<C, String, Exception> slow = Phases.<C, String, Exception>call(attempt -> {
            letLeaseRunOut(ENGINE_SHORT_LEASE);
            takeOver.set(claimLease(key, A, "new owner", LIVE_LEASE, true));
            return "from the stale attempt";
        }).finish((tx, none, called) -> {
            idem.execute(IdempotentCall.of(finishWrite, A), tx, () -> "finish write");
            return called;
        }, ResultCodec.string());
        Throwable thrown = catchThrowable(() -> managed.run(IdempotentCall.of(key, A), slow));
        acquired(p, takeOver.get(), 2, null);
        assertThat(thrown).as(p.broken("The stale attempt's finish")).isInstanceOf(LeaseLostException.class);
        assertOutcome(p, inTx(idem, finishWrite, A, new Counting("after"), false), Outcome.Status.EXECUTED, "after");
        ResultCodec<String> codec = ResultCodec.string();
        byte[] result = codec.encode("from the new owner");
        assertThat(ended(tx -> leasing().completeLeased(tx, "new owner", new LeasedCompletion(key, RecordStatus.COMPLETED, codec.name(),
                result, RETENTION)))).as(p.broken("The new owner could not complete")).isPresent();
        assertOutcome(p, managed.lease(IdempotentCall.of(key, codec).withFingerprint(A), next -> "again"), Outcome.Status.REPLAYED, "from the new owner");
    }

    // ---- lease helpers ------------------------------------------------------------------------------

    /**
     * Lets a lease of {@code lease} run out, by the store's clock whichever it is: moves the kit's
     * clock past it (a store whose leases follow the kit's clock) and sleeps past it in real time (a
     * database's own clock).
     *
     * @param lease the lease, as claimed or extended
     * @throws InterruptedException if interrupted while sleeping
     */
    protected final void letLeaseRunOut(Duration lease) throws InterruptedException {
        Duration past = lease.plus(RUN_OUT_MARGIN);
        clock.advance(past);
        Thread.sleep(past.toMillis());
    }

    @SuppressWarnings("unchecked")
    private LeasingStore<C> leasing() {
        assumeTrue(store instanceof LeasingStore, () -> store + " keeps no leases (it is not a LeasingStore): lease mode is not checked");
        return (LeasingStore<C>) store;
    }

    private ManagedIdempotency<C> managed(Duration lease) {
        leasing();
        return ManagedIdempotency.builder(idem, transactions()).leases(LeasePolicy.builder().lease(lease).build()).build();
    }

    private static LeaseRequest request(IdempotencyKey key, Fingerprint fp, String token, Duration lease) {
        return new LeaseRequest(key, fp, token, lease, RETENTION, LOCK_TIMEOUT);
    }

    /** Claims in a transaction of its own, committed or rolled back. */
    private LeaseClaim claimLease(IdempotencyKey key, Fingerprint fp, String token, Duration lease, boolean commit) throws Exception {
        return claimLease(key, fp, token, lease, commit, null);
    }

    /** Claims, and if acquired records {@code point} in the same transaction, as the engine's prepare does. */
    private LeaseClaim claimLease(IdempotencyKey key, Fingerprint fp, String token, Duration lease, boolean commit, RecoveryPoint point)
            throws Exception {
        LeasingStore<C> s = leasing();
        C tx = open();
        LeaseClaim claim;
        try {
            claim = s.claimLease(tx, request(key, fp, token, lease));
            if (point != null && claim instanceof LeaseClaim.Acquired) {
                assertThat(s.checkpoint(tx, key, token, point)).as(Promise.FENCING.broken("The claim's own checkpoint was refused")).isTrue();
            }
        } catch (Throwable t) {
            rollbackQuietly(tx, t);
            throw t;
        }
        if (commit) {
            commit(tx);
        } else {
            rollback(tx);
        }
        return claim;
    }

    private Optional<Instant> complete(IdempotencyKey key, String token, String result) throws Exception {
        return ended(tx -> leasing().completeLeased(tx, token, new LeasedCompletion(key, RecordStatus.COMPLETED, "contract-codec",
                bytes(result), RETENTION)));
    }

    /** Runs one fenced lease primitive that reports whether it changed the record, in a transaction of its own, committed. */
    private boolean changed(TxWork<C, Boolean, RuntimeException> primitive) throws Exception {
        return leaseTx(primitive);
    }

    /** Runs one fenced lease primitive that reports a time, in a transaction of its own, committed. */
    private Optional<Instant> ended(TxWork<C, Optional<Instant>, RuntimeException> primitive) throws Exception {
        return leaseTx(primitive);
    }

    /** Runs one lease primitive in a transaction of its own, committed. */
    private <T> T leaseTx(TxWork<C, T, RuntimeException> primitive) {
        return committed(primitive);
    }

    /**
     * Runs {@code work} in a transaction of its own and commits it; rolls it back if {@code work}
     * throws, and rethrows that unchanged. A failure of the {@link #begin()} or {@link #commit(Object)}
     * hook is thrown as an {@link IdempotencyStoreException}.
     */
    private <T, X extends Exception> T committed(TxWork<C, T, X> work) throws X {
        C tx;
        try {
            tx = open();
        } catch (Exception e) {
            throw new IdempotencyStoreException(null, "the contract could not begin a transaction", e);
        }
        T result;
        try {
            result = work.apply(tx);
        } catch (Throwable t) {
            rollbackQuietly(tx, t);
            throw t;
        }
        try {
            commit(tx);
        } catch (Exception e) {
            throw new IdempotencyStoreException(null, "the contract could not commit a transaction", e);
        }
        return result;
    }

    private static RecoveryPoint point(String state) {
        return new RecoveryPoint("contract-codec", bytes(state));
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static LeaseClaim.Acquired acquired(Promise p, LeaseClaim claim, int attempt, RecoveryPoint resumeFrom) {
        String expected = "Acquired as attempt " + attempt + " resuming from " + resumeFrom;
        assertThat(claim).as(p.broken("Expected " + expected + ", got " + claim)).isInstanceOf(LeaseClaim.Acquired.class);
        LeaseClaim.Acquired a = (LeaseClaim.Acquired) claim;
        assertThat(a.attempt()).as(p.broken("Expected " + expected + ", got " + claim)).isEqualTo(attempt);
        assertThat(a.resumeFrom()).as(p.broken("Expected " + expected + ", got " + claim)).isEqualTo(resumeFrom);
        return a;
    }

    private static void held(Promise p, LeaseClaim claim, Fingerprint fp, Instant leaseUntil, int attempts) {
        Instant storeNow = claim instanceof LeaseClaim.Held h ? h.now() : leaseUntil; // the store's own, not compared here
        LeaseClaim.Held expected = new LeaseClaim.Held(fp, leaseUntil, attempts, storeNow);
        assertThat(claim).as(p.broken("Expected " + expected + ", got " + claim)).isEqualTo(expected);
    }

    private static StoredRecord found(Promise p, LeaseClaim claim, Fingerprint fp, RecordStatus status, String result) {
        String expected = "Existing with a " + status + " record of fingerprint " + fp + " and result '" + result + "'";
        assertThat(claim).as(p.broken("Expected " + expected + ", got " + claim)).isInstanceOf(LeaseClaim.Existing.class);
        StoredRecord r = ((LeaseClaim.Existing) claim).record();
        String got = r.status() + " record of fingerprint " + r.fingerprint() + ", codec " + r.codec() + ", result '"
                + (r.result() == null ? null : new String(r.result(), StandardCharsets.UTF_8)) + "'";
        boolean same = r.status() == status && r.fingerprint().equals(fp) && "contract-codec".equals(r.codec())
                && Arrays.equals(r.result(), bytes(result));
        assertThat(same).as(p.broken("Expected " + expected + " (codec contract-codec), got a " + got)).isTrue();
        return r;
    }

    // ---- the stateful property --------------------------------------------------------------------

    /**
     * Random sequences of executions, clock moves and purges, each compared with the model after every
     * step. Reports the shortest failing sequence found, one step per line.
     */
    @Test
    void randomSequencesKeepTheContract() {
        sequenceProperty("sequences run", effort().sequences(), sequences(), sequence -> runShrinking(sequence.steps(),
                steps -> check(new Sequence(steps)), Step::simpler));
    }

    /**
     * Contract 4 (docs/contract.md): random sequences of lease primitives by three workers on two
     * keys (claims with a live or a short lease, committed or rolled back; checkpoints;
     * completions; releases; extensions; letting the short leases run out), every answer compared
     * with a model. A short lease that has not been let run out may or may not have ended by the
     * store's clock, and the model accepts either answer. Reports the shortest failing sequence
     * found, one step per line.
     */
    @Test
    void randomLeaseSequencesKeepTheContract() {
        LeaseSequences<C> leases = new LeaseSequences<>(this, leasing());
        sequenceProperty("lease sequences run", effort().leaseSequences(), LeaseSequences.sequences(),
                sequence -> runShrinking(sequence.steps(), leases::firstBroken, step -> List.of()));
    }

    /**
     * Contract 9 (docs/contract.md): random sequences of chunks (of keys that differ by scope and
     * by case, given in any order, each with one of two fingerprints, then committed or rolled
     * back) and clock moves (1 ms, half the retention, the retention less 1 ms, the retention),
     * every outcome compared with a model; each sequence ends with a rolled-back chunk of every key
     * that reads the final state. Runs a tenth of {@link Effort#sequences()}. Reports the shortest
     * failing sequence found, one step per line.
     */
    @Test
    void randomChunksKeepTheContract() {
        sequenceProperty("chunk sequences run", Math.max(1, effort().sequences() / 10), chunkSequences(),
                steps -> runShrinking(steps, this::checkChunks, step -> List.of()));
    }

    private static final List<IdempotencyKey> CHUNK_KEYS = List.of(IdempotencyKey.of("chunks", "k1"), IdempotencyKey.of("chunks", "K1"),
            IdempotencyKey.of("chunks-2", "k1"), IdempotencyKey.of("chunks", "k2"));

    /** A step of a chunk sequence: a chunk of {@code items} (committed or not), or a clock move by {@code advance}. */
    private record ChunkStep(List<Item> items, boolean commit, Duration advance) {
        @Override
        public String toString() {
            if (advance != null) {
                return "advance the clock by " + advance;
            }
            StringBuilder s = new StringBuilder("chunk [");
            for (Item item : items) {
                s.append(s.length() > 7 ? ", " : "").append(item).append(item.fingerprint().equals(A) ? " A" : " B");
            }
            return s.append("] then ").append(commit ? "commit" : "roll back").toString();
        }
    }

    /** Chunks (3 in 4) of 1 to 4 distinct keys in a random order, each item with fingerprint A or B; clock moves (1 in 4). */
    static Gen<List<ChunkStep>> chunkSequences() {
        Gen<ChunkStep> step = integers().between(0, 7).zip(integers().between(0, Integer.MAX_VALUE), (kind, r) -> {
            if (kind >= 6) {
                Duration[] moves = {Duration.ofMillis(1), RETENTION.dividedBy(2), RETENTION.minusMillis(1), RETENTION};
                return new ChunkStep(null, false, moves[r % moves.length]);
            }
            List<IdempotencyKey> keys = new ArrayList<>(CHUNK_KEYS);
            java.util.Collections.shuffle(keys, new java.util.Random(r));
            int size = 1 + (r >>> 3) % keys.size();
            List<Item> items = new ArrayList<>(size);
            for (int i = 0; i < size; i++) {
                items.add(new Item(keys.get(i), ((r >>> (8 + i)) & 3) == 0 ? B : A, "v" + (r % 1000) + "-" + i));
            }
            return new ChunkStep(items, ((r >>> 16) & 3) != 0, null);
        });
        return lists().of(step).ofSizeBetween(1, 8);
    }

    /** What a committed chunk recorded for a key, in the chunk model. */
    private record ChunkRecord(Fingerprint fingerprint, String value, Instant expiresAt) {
    }

    private AssertionError checkChunks(List<ChunkStep> steps) {
        try {
            runChunks(steps);
            return null;
        } catch (AssertionError e) {
            return e;
        }
    }

    private void runChunks(List<ChunkStep> steps) {
        try {
            clean();
        } catch (Exception e) {
            throw new AssertionError("could not empty the store before a sequence: " + e, e);
        }
        Map<IdempotencyKey, ChunkRecord> model = new HashMap<>();
        List<ChunkStep> all = new ArrayList<>(steps);
        List<Item> everyKey = new ArrayList<>();
        for (IdempotencyKey key : CHUNK_KEYS) {
            everyKey.add(new Item(key, A, "final-" + key.id()));
        }
        all.add(new ChunkStep(everyKey, false, null));
        for (int i = 0; i < all.size(); i++) {
            ChunkStep step = all.get(i);
            if (step.advance() != null) {
                clock.advance(step.advance());
                continue;
            }
            Instant now = clock.instant();
            List<String> expected = new ArrayList<>();
            Map<IdempotencyKey, ChunkRecord> written = new HashMap<>();
            for (Item item : step.items()) {
                ChunkRecord rec = model.get(item.key());
                if (rec != null && rec.expiresAt().isAfter(now)) {
                    expected.add(rec.fingerprint().equals(item.fingerprint()) ? "REPLAYED(" + rec.value() + ")" : "MISMATCH");
                } else {
                    expected.add("EXECUTED(" + item.value() + ")");
                    written.put(item.key(), new ChunkRecord(item.fingerprint(), item.value(), now.plus(RETENTION)));
                }
            }
            List<Outcome<String>> outcomes;
            try {
                outcomes = chunkInTx(Promise.CHUNK_OUTCOMES, step.items(), new ItemRuns(), step.commit());
            } catch (AssertionError e) {
                throw chunkFailure(all, i, e.getMessage(), e.getCause());
            } catch (Exception e) {
                throw chunkFailure(all, i, Promise.CHUNK_OUTCOMES.broken("executeChunk threw " + e), e);
            }
            List<String> seen = outcomes.stream().map(IdempotencyStoreContract::describe).toList();
            if (!seen.equals(expected)) {
                throw chunkFailure(all, i, Promise.CHUNK_OUTCOMES.broken("Expected the outcomes " + expected + ", in input order; got " + seen),
                        null);
            }
            if (step.commit()) {
                model.putAll(written);
            }
        }
    }

    private static AssertionError chunkFailure(List<ChunkStep> steps, int failed, String message, Throwable cause) {
        StringBuilder s = new StringBuilder(message).append("\nAt step ").append(failed + 1).append(" of:");
        for (int i = 0; i < steps.size(); i++) {
            s.append("\n  ").append(i + 1).append(". ").append(steps.get(i));
            if (i == steps.size() - 1) {
                s.append(" (the kit's final read of every key)");
            }
        }
        return new AssertionError(s.toString(), cause);
    }

    /** Runs a stateful property at least {@code examples} times; a failure reports the seed to repeat it. */
    private <T> void sequenceProperty(String what, int examples, Gen<T> gen, java.util.function.Consumer<T> property) {
        long seed = seed();
        try {
            runAtLeast(examples, seed, gen, property);
        } catch (AssertionError e) {
            Throwable failure = failureOf(e);
            throw new AssertionError(failure.getMessage() + "\n(random seed " + seed + "; run again with -D" + SEED_PROPERTY + "="
                    + seed + ")", failure == e ? e : failure.getCause());
        }
        assertThat(examplesRun.get()).as(what).isGreaterThanOrEqualTo(examples);
    }

    private final AtomicInteger examplesRun = new AtomicInteger();

    /** QuickTheories skips examples it has generated before; run until the effort is reached. */
    private <T> void runAtLeast(int examples, long seed, Gen<T> gen, java.util.function.Consumer<T> property) {
        examplesRun.set(0);
        for (long round = 0; examplesRun.get() < examples && round < 100; round++) {
            qt().withFixedSeed(seed + round).withExamples(examples - examplesRun.get()).withShrinkCycles(0)
                    .forAll(gen)
                    .checkAssert(property);
        }
    }

    /** The system property that fixes the properties' random seed, to repeat a failure. */
    public static final String SEED_PROPERTY = "idempotency.testkit.seed";

    private static long seed() {
        String fixed = System.getProperty(SEED_PROPERTY);
        return fixed == null || fixed.isBlank() ? System.nanoTime() : Long.parseLong(fixed.strip());
    }

    /** QuickTheories reports a failure as text; the contract keeps the failure itself. */
    private volatile AssertionError lastFailure;

    private Throwable failureOf(AssertionError fromQuickTheories) {
        AssertionError last = lastFailure;
        lastFailure = null;
        return last != null ? last : fromQuickTheories;
    }

    private static String promiseOf(AssertionError failure) {
        String m = String.valueOf(failure.getMessage());
        return m.substring(0, Math.max(0, m.indexOf(':')));
    }

    /** A failing sequence, already made as short as the contract could make it. */
    private static final class SequenceFailure extends AssertionError {
        SequenceFailure(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * Runs one generated sequence; if it breaks a promise, shortens it (dropping steps one at a time
     * while the same promise still breaks) and fails with the shortest one found.
     */
    private <S> void runShrinking(List<S> generated, java.util.function.Function<List<S>, AssertionError> check,
                                  java.util.function.Function<S, List<S>> simpler) {
        examplesRun.incrementAndGet();
        AssertionError failure = check.apply(generated);
        if (failure == null) {
            return;
        }
        String promise = promiseOf(failure);
        List<S> steps = new ArrayList<>(generated);
        boolean shorter = true;
        for (int rounds = 0; shorter && rounds < 64; rounds++) {
            shorter = false;
            for (int i = steps.size() - 1; i >= 0 && steps.size() > 1; i--) {
                List<S> candidate = new ArrayList<>(steps);
                candidate.remove(i);
                AssertionError again = check.apply(candidate);
                if (again != null && promiseOf(again).equals(promise)) {
                    steps = candidate;
                    failure = again;
                    shorter = true;
                }
            }
            // Then make single steps simpler: shorter clock moves, plainer results.
            for (int i = 0; i < steps.size(); i++) {
                for (S simple : simpler.apply(steps.get(i))) {
                    List<S> candidate = new ArrayList<>(steps);
                    candidate.set(i, simple);
                    AssertionError again = check.apply(candidate);
                    if (again != null && promiseOf(again).equals(promise)) {
                        steps = candidate;
                        failure = again;
                        shorter = true;
                        break;
                    }
                }
            }
        }
        lastFailure = new SequenceFailure(failure.getMessage() + "\n(the shortest failing sequence found, from " + generated.size()
                + " generated steps)", failure.getCause());
        throw lastFailure;
    }

    /**
     * Steps: executions (7 in 13) whose work returns a result of any type ({@link Results}), throws,
     * or fails finally; clock moves of 1 ms to past the retention (1 in 13), past the retention (1 in
     * 13), and to 1 ms before, exactly on, or 1 ms after a record's expiry (2 in 13); purges (2 in 13).
     */
    static Gen<Sequence> sequences() {
        Gen<Step> step = integers().between(0, 12).zip(integers().between(0, 2), integers().between(0, 3), integers().between(0, 4),
                integers().between(0, Integer.MAX_VALUE), (kind, key, fp, work, r) -> {
                    if (kind <= 6) {
                        WorkKind w = work <= 2 ? WorkKind.RETURNS : work == 3 ? WorkKind.THROWS_PLAIN : WorkKind.THROWS_FINAL;
                        return new Execute(key, fp == 3 ? 1 : 0, w, (r & 1) == 0, resultKind((r >>> 1) % 16));
                    }
                    if (kind == 7) {
                        return new Advance(clockMove(r >>> 5));
                    }
                    if (kind == 8) {
                        return new Advance(RETENTION.plusMinutes(1), true);
                    }
                    if (kind <= 10) {
                        return new AdvanceToExpiry(key, fp % 3 - 1);
                    }
                    return new Purge();
                });
        return lists().of(step).ofSizeBetween(1, 16).map(Sequence::new);
    }

    /** Strings 6 times in 16, each other kind once, the custom codec twice. */
    private static Results.Kind resultKind(int i) {
        Results.Kind[] others = {Results.Kind.NULL, Results.Kind.EMPTY_BYTES, Results.Kind.BYTES, Results.Kind.LARGE_BYTES, Results.Kind.INT,
            Results.Kind.LONG, Results.Kind.BOOLEAN, Results.Kind.UUID, Results.Kind.CUSTOM, Results.Kind.CUSTOM};
        return i < 6 ? Results.Kind.STRING : others[i - 6];
    }

    /** A clock move: milliseconds, seconds, minutes, the retention to the millisecond (-1, 0, +1), or a little past it. */
    private static Duration clockMove(int r) {
        int v = r / 5;
        switch (r % 5) {
            case 0:
                return Duration.ofMillis(1 + v % 999);
            case 1:
                return Duration.ofSeconds(1 + v % 59);
            case 2:
                return Duration.ofMinutes(1 + v % 59);
            case 3:
                return RETENTION.plusMillis(v % 3 - 1);
            default:
                return RETENTION.plusMinutes(1 + v % 5);
        }
    }

    private AssertionError check(Sequence sequence) {
        try {
            runSteps(sequence);
            return null;
        } catch (AssertionError e) {
            return e;
        }
    }

    private void runSteps(Sequence sequence) {
        try {
            clean();
        } catch (Exception e) {
            throw new AssertionError("could not empty the store before a sequence: " + e, e);
        }
        Model model = new Model(RETENTION);
        List<Step> steps = sequence.steps();
        for (int i = 0; i < steps.size(); i++) {
            int n = i + 1;
            Step step = steps.get(i);
            try {
                if (step instanceof Execute e) {
                    execute(model, e, n);
                } else if (step instanceof Advance a) {
                    clock.advance(a.by());
                } else if (step instanceof AdvanceToExpiry t) {
                    Model.Rec rec = model.record(Operations.KEYS.get(t.key()));
                    Instant target = rec == null ? null : rec.expiresAt().plusMillis(t.offsetMillis());
                    if (target != null && target.isAfter(clock.instant())) {
                        clock.set(target);
                    }
                } else {
                    int expected = model.expired(clock.instant());
                    int removed = purge(PURGE_BATCH);
                    model.purge(clock.instant());
                    if (removed != expected) {
                        throw new StepFailure(Promise.PURGE.broken("Purge removed " + removed + " records, but " + expected
                                + " had expired"), null);
                    }
                }
            } catch (StepFailure f) {
                throw new AssertionError(f.getMessage() + "\nat step " + n + " of this sequence:" + sequence, f.getCause());
            } catch (HookFailure h) {
                throw h;
            } catch (Exception | AssertionError e) {
                throw new AssertionError("Contract 3: execute must return an outcome or the work's own exception, but at step "
                        + n + " the store failed: " + e + "\nat step " + n + " of this sequence:" + sequence, e);
            }
        }
        for (IdempotencyKey key : Operations.KEYS) {
            try {
                probe(model, key);
            } catch (StepFailure f) {
                throw new AssertionError(f.getMessage() + "\nafter this sequence, executing key " + key
                        + " with fingerprint A in a transaction rolled back:" + sequence, f.getCause());
            } catch (Exception e) {
                throw new AssertionError("Contract 3: the store failed after this sequence: " + e + sequence, e);
            }
        }
    }

    private void execute(Model model, Execute step, int n) throws Exception {
        IdempotencyKey key = Operations.KEYS.get(step.key());
        Instant now = clock.instant();
        Model.Expectation expected = model.expect(key, step.fingerprint(), now);
        Object value = Results.value(step.result(), n);
        String label = Results.label(value);
        boolean custom = expected.runs() ? Results.custom(step.result()) : expected.record().custom();
        String failure = "final failure at step " + n;
        PlainFailure plain = new PlainFailure("plain failure at step " + n);
        AtomicInteger ran = new AtomicInteger();
        Work<Object, Exception> work = () -> {
            ran.incrementAndGet();
            switch (step.work()) {
                case RETURNS:
                    return value;
                case THROWS_PLAIN:
                    throw plain;
                default:
                    throw new FinalFailure(failure);
            }
        };
        C tx = open();
        Outcome<Object> outcome = null;
        Throwable thrown = null;
        try {
            outcome = execute(idem, key, Operations.fingerprint(step.fingerprint()), tx, custom ? receipts() : null, work);
        } catch (Exception e) {
            thrown = e;
        }
        boolean commit = step.commits() && thrown == null && outcome.status() != Outcome.Status.IN_PROGRESS;
        if (commit) {
            commit(tx);
        } else {
            rollback(tx);
        }
        String seen = thrown != null ? "the exception " + thrown : describe(outcome);
        if (thrown instanceof ResultCodecException) {
            Promise why = expected.runs() ? expected.runReason() : ran.get() > 0 ? expected.expected() : Promise.RESULT;
            throw new StepFailure(why.broken("The engine could not decode what the store answered (" + thrown.getMessage() + "); "
                    + (expected.runs() ? "the work should have run" : "expected the record " + describe(expected.record()))), thrown);
        }
        if (thrown == plain && plain.getSuppressed().length > 0) {
            throw new StepFailure(Promise.WORK_EXCEPTION.broken("Releasing the claim after the work threw failed: "
                    + plain.getSuppressed()[0]), plain.getSuppressed()[0]);
        }
        if (thrown != null && thrown != plain) {
            throw new StepFailure(Promise.WORK_EXCEPTION.broken("execute threw " + thrown), thrown);
        }
        if (expected.runs()) {
            Promise why = outcome != null ? diagnosis(model, key, outcome, now, expected.runReason()) : expected.runReason();
            if (ran.get() != 1) {
                throw new StepFailure(why.broken("The work should have run (" + why.tag() + "), but did not; the outcome was " + seen), null);
            }
            switch (step.work()) {
                case RETURNS:
                    check(outcome instanceof Outcome.Executed<Object> x && label.equals(Results.label(x.value())),
                            why, "Expected Executed(" + label + "), got " + seen);
                    if (step.result().unique()) {
                        model.origin(label, n, key, commit);
                    }
                    if (commit) {
                        model.committed(key, step.fingerprint(), false, label, now, n, custom);
                    } else {
                        model.rolledBack(key, Promise.ROLLBACK);
                    }
                    break;
                case THROWS_PLAIN:
                    check(thrown == plain, Promise.WORK_EXCEPTION, "Expected the work's own exception, got " + seen);
                    model.rolledBack(key, Promise.WORK_EXCEPTION);
                    break;
                default:
                    check(outcome instanceof Outcome.Failed<Object> f && !f.replayed() && failure.equals(f.errorMessage()),
                            Promise.FINAL_FAILURE, "Expected a new recorded failure, got " + seen);
                    model.origin(failure, n, key, commit);
                    if (commit) {
                        model.committed(key, step.fingerprint(), true, failure, now, n);
                    } else {
                        model.rolledBack(key, Promise.ROLLBACK);
                    }
            }
            return;
        }
        compareWithRecord(model, key, expected, outcome, seen, ran.get(), now);
    }

    private void probe(Model model, IdempotencyKey key) throws Exception {
        Instant now = clock.instant();
        Model.Expectation expected = model.expect(key, 0, now);
        boolean custom = !expected.runs() && expected.record().custom();
        AtomicInteger ran = new AtomicInteger();
        Outcome<Object> outcome;
        try {
            outcome = inTxAny(key, Operations.fingerprint(0), custom ? receipts() : null, () -> {
                ran.incrementAndGet();
                return custom ? new Results.Receipt("probe") : "probe";
            }, false);
        } catch (ResultCodecException e) {
            Promise why = expected.runs() ? expected.runReason() : Promise.RESULT;
            throw new StepFailure(why.broken("The engine could not decode what the store answered (" + e.getMessage() + "); "
                    + (expected.runs() ? "the work should have run" : "expected the record " + describe(expected.record()))), e);
        }
        String seen = describe(outcome);
        if (expected.runs()) {
            Promise why = diagnosis(model, key, outcome, now, expected.runReason());
            check(ran.get() == 1 && outcome.isExecuted(), why, "Expected the work to run, got " + seen);
        } else {
            compareWithRecord(model, key, expected, outcome, seen, ran.get(), now);
        }
    }

    private void compareWithRecord(Model model, IdempotencyKey key, Model.Expectation expected, Outcome<?> outcome, String seen,
                                   int ran, Instant now) {
        Model.Rec rec = expected.record();
        Promise p = expected.expected();
        check(ran == 0, p, "The work ran; the outcome was " + seen + "; the record holds " + describe(rec));
        switch (p) {
            case MISMATCH:
                check(outcome instanceof Outcome.Mismatch, p, "Expected Mismatch, got " + seen);
                break;
            case FINAL_FAILURE:
                check(outcome instanceof Outcome.Failed<?> f && f.replayed() && rec.value().equals(f.errorMessage()), p,
                        "Expected the recorded failure '" + rec.value() + "' replayed, got " + seen);
                break;
            default:
                if (!(outcome instanceof Outcome.Replayed<?> r && rec.value().equals(Results.label(r.value())))) {
                    Promise why = diagnosis(model, key, outcome, now, p);
                    throw new StepFailure(why.broken("Expected Replayed(" + rec.value() + "), got " + seen), null);
                }
        }
    }

    private static Promise diagnosis(Model model, IdempotencyKey key, Outcome<?> outcome, Instant now, Promise fallback) {
        String value = outcome instanceof Outcome.Replayed<?> r ? Results.label(r.value())
                : outcome instanceof Outcome.Failed<?> f ? f.errorMessage() : null;
        Promise p = value == null ? null : model.diagnose(key, value, now);
        return p != null ? p : fallback;
    }

    private static String describe(Model.Rec rec) {
        return (rec.failed() ? "failure '" : "value '") + rec.value() + "' with fingerprint " + Operations.FINGERPRINTS.get(rec.fingerprint())
                + " from step " + rec.step() + ", expiring at " + rec.expiresAt();
    }

    /** Fails with {@code promise} broken, and {@code detail}, unless {@code ok}. */
    static void check(boolean ok, Promise promise, String detail) {
        if (!ok) {
            throw new StepFailure(promise.broken(detail), null);
        }
    }

    /** A broken promise found at one step; the sequence is added where it is caught. */
    static final class StepFailure extends RuntimeException {
        StepFailure(String message, Throwable cause) {
            super(message, cause, false, false);
        }
    }

    // ---- the concurrency property -----------------------------------------------------------------

    /**
     * Rounds of 2 to 6 attempts on two keys, each in a thread and a transaction of its own, started
     * together; some commit, some roll back, some throw. Each key starts a round in one of the states
     * of {@link Start}: no record, a committed result, a result that expires exactly now, a recorded
     * final failure, or (for a {@link LeasingStore}) a live lease. Afterwards each key has at most one
     * committed execution, every attempt saw what the model allows for its key's start (that
     * execution's result, the recorded one, InProgress or Mismatch), and the store replays it. A
     * failing round is run again with fewer threads while it still fails, and the fewest reported.
     */
    @Test
    void concurrentAttemptsExecuteAtMostOncePerKey() {
        Gen<Attempt> attempt = integers().between(0, 1).zip(integers().between(0, 3), integers().between(0, 5), integers().between(0, 2),
                (key, fp, fate, hold) -> new Attempt(key, fp == 3 ? 1 : 0, fate <= 2, hold, fate == 5));
        boolean leases = store instanceof LeasingStore;
        Gen<Start> start = integers().between(0, 9).map(i -> i <= 2 ? Start.ABSENT : i <= 5 ? Start.EXPIRED : i == 6 ? Start.COMPLETED
                : i == 7 ? Start.FAILED : leases ? Start.LEASED : Start.ABSENT);
        Gen<Round> rounds = start.zip(start, lists().of(attempt).ofSizeBetween(2, 6), (x, y, attempts) -> new Round(List.of(x, y), attempts));
        long seed = seed();
        try {
            runAtLeast(effort().concurrentRounds(), seed, rounds, this::runRound);
        } catch (AssertionError e) {
            Throwable failure = failureOf(e);
            throw new AssertionError(failure.getMessage() + "\n(random seed " + seed + "; thread scheduling varies, so a"
                    + " rerun with -D" + SEED_PROPERTY + "=" + seed + " may or may not fail again)", failure == e ? e : failure.getCause());
        }
        assertThat(examplesRun.get()).as("rounds run").isGreaterThanOrEqualTo(effort().concurrentRounds());
    }

    private record Result(Outcome<String> outcome, Throwable thrown, boolean ran, boolean committed) {
        String describe() {
            return (thrown != null ? "threw " + thrown : IdempotencyStoreContract.describe(outcome))
                    + (ran ? ", work ran" : "") + (committed ? ", committed" : ", not committed");
        }
    }

    /** How often a smaller round is tried before it counts as passing: thread scheduling varies. */
    private static final int SHRINK_TRIES = 3;

    private void runRound(Round round) {
        examplesRun.incrementAndGet();
        AssertionError failure = roundFailure(round);
        if (failure == null) {
            return;
        }
        String promise = promiseOf(failure);
        Round smallest = round;
        boolean fewer = true;
        while (fewer && smallest.attempts().size() > 1) {
            fewer = false;
            for (int i = smallest.attempts().size() - 1; i >= 0 && !fewer; i--) {
                List<Attempt> attempts = new ArrayList<>(smallest.attempts());
                attempts.remove(i);
                Round candidate = new Round(smallest.starts(), attempts);
                for (int t = 0; t < SHRINK_TRIES && !fewer; t++) {
                    AssertionError again = roundFailure(candidate);
                    if (again != null && promiseOf(again).equals(promise)) {
                        smallest = candidate;
                        failure = again;
                        fewer = true;
                    }
                }
            }
        }
        lastFailure = new AssertionError(failure.getMessage() + "\n(the fewest threads found that still fail: "
                + smallest.attempts().size() + ", from a round of " + round.attempts().size() + ")", failure.getCause());
        throw lastFailure;
    }

    private AssertionError roundFailure(Round round) {
        try {
            checkRound(round);
            return null;
        } catch (HookFailure h) {
            throw h;
        } catch (AssertionError e) {
            return e;
        }
    }

    /** Puts each key in its starting state, in transactions of their own, committed. */
    private void setUp(Round round) throws Exception {
        List<Start> starts = round.starts();
        for (int k = 0; k < starts.size(); k++) {
            if (starts.get(k) == Start.LEASED) {
                leaseHeldFor(Operations.CONCURRENT_KEYS.get(k));
            }
        }
        if (starts.contains(Start.EXPIRED)) {
            for (int k = 0; k < starts.size(); k++) {
                if (starts.get(k) == Start.EXPIRED) {
                    inTx(idem, Operations.CONCURRENT_KEYS.get(k), A, () -> "old", true);
                }
            }
            clock.advance(RETENTION);
        }
        for (int k = 0; k < starts.size(); k++) {
            IdempotencyKey key = Operations.CONCURRENT_KEYS.get(k);
            if (starts.get(k) == Start.COMPLETED) {
                inTx(idem, key, A, () -> "s", true);
            } else if (starts.get(k) == Start.FAILED) {
                inTx(idem, key, A, () -> {
                    throw new FinalFailure("f");
                }, true);
            }
        }
    }

    private void checkRound(Round round) {
        try {
            clean();
            setUp(round);
        } catch (HookFailure h) {
            throw h;
        } catch (Exception | AssertionError e) {
            throw new AssertionError("Contract 3: could not set up a round (" + e + "):" + round, e);
        }
        List<Attempt> attempts = round.attempts();
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Result>> futures = new ArrayList<>();
        for (int i = 0; i < attempts.size(); i++) {
            Attempt a = attempts.get(i);
            String value = "t" + (i + 1);
            futures.add(threads.submit(() -> {
                go.await();
                return attempt(a, value);
            }));
        }
        go.countDown();
        List<Result> results = new ArrayList<>();
        for (Future<Result> f : futures) {
            results.add(await(Promise.AT_MOST_ONCE, f));
        }
        StringBuilder report = new StringBuilder();
        for (int k = 0; k < round.starts().size(); k++) {
            report.append(String.format("%n  key %s starts with %s", Operations.CONCURRENT_KEYS.get(k), round.starts().get(k).describe()));
        }
        for (int i = 0; i < results.size(); i++) {
            report.append(String.format("%n  %s%n      -> %s", attempts.get(i).describe(i + 1), results.get(i).describe()));
        }
        Map<Integer, Integer> winner = new HashMap<>();
        for (int i = 0; i < results.size(); i++) {
            Result r = results.get(i);
            Attempt a = attempts.get(i);
            boolean ownFailure = r.thrown() instanceof PlainFailure pf && a.throwsPlain() && ("t" + (i + 1)).equals(pf.getMessage());
            if (r.thrown() != null && !ownFailure && !(r.thrown() instanceof TransactionConflictException)) {
                Promise p = a.throwsPlain() && r.ran() ? Promise.WORK_EXCEPTION : null;
                fail((p != null ? p.broken("The work threw, and the caller got another exception: " + r.thrown())
                        : "Contract 3: an attempt failed with " + r.thrown() + " instead of an outcome (or a TransactionConflictException)")
                        + " in this round:" + report, r.thrown());
            }
            Start start = round.starts().get(a.key());
            if (r.ran() && (start == Start.COMPLETED || start == Start.FAILED || start == Start.LEASED)) {
                Promise p = start == Start.COMPLETED ? Promise.REPLAY : start == Start.FAILED ? Promise.FINAL_FAILURE
                        : a.fingerprint() == 0 ? Promise.AT_MOST_ONCE : Promise.MISMATCH_IN_PROGRESS;
                fail(p.broken("Thread " + (i + 1) + " ran the work of key " + Operations.CONCURRENT_KEYS.get(a.key()) + ", which started with "
                        + start.describe() + ", in this round:" + report));
            }
            if (r.ran() && r.committed()) {
                Integer earlier = winner.put(a.key(), i);
                if (earlier != null) {
                    fail(Promise.AT_MOST_ONCE.broken("Key " + Operations.CONCURRENT_KEYS.get(a.key())
                            + " was executed in two committed transactions (threads " + (earlier + 1) + " and " + (i + 1)
                            + ") in this round:" + report));
                }
            }
        }
        for (int i = 0; i < results.size(); i++) {
            Result r = results.get(i);
            Attempt a = attempts.get(i);
            Start start = round.starts().get(a.key());
            if (r.outcome() == null) {
                continue;
            }
            String problem = start == Start.COMPLETED || start == Start.FAILED || start == Start.LEASED
                    ? startedProblem(start, a, r.outcome()) : absentProblem(attempts, winner.get(a.key()), a, r.outcome());
            if (problem != null) {
                Promise p = a.fingerprint() == 1 && start == Start.LEASED ? Promise.MISMATCH_IN_PROGRESS
                        : a.fingerprint() == 1 && start != Start.ABSENT && start != Start.EXPIRED ? Promise.MISMATCH
                        : start == Start.EXPIRED && "old".equals(r.outcome().valueOr(null)) ? Promise.EXPIRY
                        : start == Start.COMPLETED ? Promise.REPLAY : start == Start.FAILED ? Promise.FINAL_FAILURE : Promise.AT_MOST_ONCE;
                fail(p.broken("Thread " + (i + 1) + " " + problem + ", in this round:" + report));
            }
        }
        for (int k = 0; k < Operations.CONCURRENT_KEYS.size(); k++) {
            IdempotencyKey key = Operations.CONCURRENT_KEYS.get(k);
            Start start = round.starts().get(k);
            Integer w = winner.get(k);
            int fp = w == null ? 0 : attempts.get(w).fingerprint();
            Outcome<String> after;
            try {
                after = inTx(idem, key, Operations.fingerprint(fp), () -> "after", false);
            } catch (Exception e) {
                throw new AssertionError("Contract 3: the store failed after this round: " + e + report, e);
            }
            String expected = start == Start.COMPLETED ? "REPLAYED(s)" : start == Start.FAILED ? "FAILED(f, replayed)"
                    : start == Start.LEASED ? "IN_PROGRESS" : w == null ? "EXECUTED(after)" : "REPLAYED(t" + (w + 1) + ")";
            Promise p = start == Start.COMPLETED ? Promise.REPLAY : start == Start.FAILED ? Promise.FINAL_FAILURE
                    : start == Start.LEASED ? Promise.MISMATCH_IN_PROGRESS : w == null ? Promise.HOLDER_ROLLS_BACK : Promise.AT_MOST_ONCE;
            assertThat(describe(after)).as(p.broken("After this round, an attempt on key " + key + " with fingerprint "
                    + Operations.FINGERPRINTS.get(fp) + " must get " + expected + (w == null ? "" : " (thread " + (w + 1) + " executed and committed)")
                    + "; it got " + describe(after) + ". The round:" + report)).isEqualTo(expected);
        }
    }

    /** What is wrong with an outcome on a key that started with a record that stays; {@code null} if nothing. */
    private static String startedProblem(Start start, Attempt a, Outcome<String> o) {
        String expected = a.fingerprint() == 1 ? "MISMATCH" : start == Start.COMPLETED ? "REPLAYED(s)" : start == Start.FAILED
                ? "FAILED(f, replayed)" : "IN_PROGRESS";
        String got = describe(o);
        return expected.equals(got) ? null : "got " + got + " where the key's record must answer " + expected;
    }

    /** What is wrong with an outcome on a key that started without a live record; {@code null} if nothing. */
    private static String absentProblem(List<Attempt> attempts, Integer w, Attempt a, Outcome<String> o) {
        if (o instanceof Outcome.Replayed<String> replayed) {
            boolean fromWinner = w != null && ("t" + (w + 1)).equals(replayed.value());
            return fromWinner ? null : "replayed '" + replayed.value() + "', which no committed execution of its key in the round produced";
        }
        if (o instanceof Outcome.Mismatch) {
            return w != null && attempts.get(w).fingerprint() != a.fingerprint() ? null
                    : "got Mismatch, but no committed execution of its key had another fingerprint";
        }
        if (o instanceof Outcome.Failed) {
            return "got a recorded failure, but no work failed finally";
        }
        return null;
    }

    private Result attempt(Attempt a, String value) throws Exception {
        IdempotencyKey key = Operations.CONCURRENT_KEYS.get(a.key());
        AtomicInteger ran = new AtomicInteger();
        C tx = open();
        Outcome<String> outcome;
        try {
            outcome = idem.execute(IdempotentCall.of(key, Operations.fingerprint(a.fingerprint())), tx, () -> {
                ran.incrementAndGet();
                if (a.throwsPlain()) {
                    throw new PlainFailure(value);
                }
                return value;
            });
            if (a.hold() == 1) {
                Thread.yield();
            } else if (a.hold() == 2) {
                Thread.sleep(1);
            }
        } catch (Exception e) {
            rollbackQuietly(tx, e);
            return new Result(null, e, ran.get() > 0, false);
        }
        if (!a.commit() || outcome.status() == Outcome.Status.IN_PROGRESS) {
            rollback(tx);
            return new Result(outcome, null, ran.get() > 0, false);
        }
        try {
            commit(tx);
        } catch (Exception e) {
            return new Result(outcome, null, ran.get() > 0, false);
        }
        return new Result(outcome, null, ran.get() > 0, true);
    }

    // ---- helpers ------------------------------------------------------------------------------------

    /** @return how long an attempt may wait with {@code timeout}: rounded up to whole seconds, plus {@link #LOCK_WAIT_TOLERANCE} */
    static Duration lockWaitBound(Duration timeout) {
        long seconds = Math.max(1, (timeout.toMillis() + 999) / 1000);
        return Duration.ofSeconds(seconds).plus(LOCK_WAIT_TOLERANCE);
    }

    @SuppressWarnings("unchecked")
    static ResultCodec<Object> receipts() {
        return (ResultCodec<Object>) (ResultCodec<?>) Results.RECEIPTS;
    }

    /** Executes with {@code codec}, or with the codec the engine picks by type if {@code null}. */
    private static <C> Outcome<Object> execute(Idempotency<C> engine, IdempotencyKey key, Fingerprint fp, C tx, ResultCodec<Object> codec,
                                                Work<Object, ? extends Exception> work) throws Exception {
        return codec == null ? engine.execute(IdempotentCall.of(key, fp), tx, work) : engine.execute(IdempotentCall.of(key, codec).withFingerprint(fp), tx, work);
    }

    /** As {@link #inTx}, for results of any type. */
    private Outcome<Object> inTxAny(IdempotencyKey key, Fingerprint fp, ResultCodec<Object> codec, Work<Object, ? extends Exception> work,
                                    boolean commit) throws Exception {
        return inOwnTx(tx -> execute(idem, key, fp, tx, codec, work), commit);
    }

    /**
     * Commits a lease claim of {@code key} with fingerprint A, a live lease and twice the retention,
     * as an attempt in lease mode would. A store whose clock is not the kit's (a database server's)
     * judged the lease by its own; the kit's clock is then set to the store's, so that the engine's
     * transactional attempts see the record live as well.
     */
    private LeaseClaim.Acquired leaseHeldFor(IdempotencyKey key) throws Exception {
        LeasingStore<C> s = leasing();
        C tx = open();
        LeaseClaim claim;
        try {
            claim = s.claimLease(tx, new LeaseRequest(key, A, "lease-holder", LIVE_LEASE, RETENTION.multipliedBy(2), LOCK_TIMEOUT));
        } catch (Throwable t) {
            rollbackQuietly(tx, t);
            throw t;
        }
        commit(tx);
        LeaseClaim.Acquired a = acquired(Promise.LEASE_NEW, claim, 1, null);
        if (!a.now().equals(clock.instant())) {
            clock.set(a.now());
        }
        return a;
    }

    /** Runs the work in a transaction of its own; commits unless told not to or the outcome is InProgress. */
    private Outcome<String> inTx(Idempotency<C> engine, IdempotencyKey key, Fingerprint fp, Work<String, ?> work, boolean commit)
            throws Exception {
        return inOwnTx(tx -> engine.execute(IdempotentCall.of(key, fp), tx, work), commit);
    }

    /** Runs one execute in a transaction of its own; commits unless told not to or the outcome is InProgress. */
    private <T> Outcome<T> inOwnTx(TxWork<C, Outcome<T>, Exception> call, boolean commit) throws Exception {
        C tx = open();
        Outcome<T> outcome;
        try {
            outcome = call.apply(tx);
        } catch (Throwable t) {
            rollbackQuietly(tx, t);
            throw t;
        }
        if (commit && outcome.status() != Outcome.Status.IN_PROGRESS) {
            commit(tx);
        } else {
            rollback(tx);
        }
        return outcome;
    }

    private Outcome<String> withHolder(Promise promise, IdempotencyKey key, Idempotency<C> engine, Counting waiterWork, boolean holderCommits)
            throws Exception {
        C holder = open();
        boolean open = true;
        try {
            assertOutcome(promise, idem.execute(IdempotentCall.of(key, A), holder, new Counting("holder")), Outcome.Status.EXECUTED, "holder");
            Future<Outcome<String>> waiter = threads.submit(() -> inTx(engine, key, A, waiterWork, true));
            // Let the waiter reach the store before the holder ends. The expected outcome is the same
            // if it does not: it then finds the holder's committed record, or none.
            Thread.sleep(100);
            open = false;
            if (holderCommits) {
                commit(holder);
            } else {
                rollback(holder);
            }
            return await(promise, waiter);
        } finally {
            if (open) {
                rollback(holder);
            }
        }
    }

    private int purge(int limit) {
        return committed(tx -> idem.purgeExpired(tx, limit));
    }

    private static <T> T await(Promise promise, Future<T> future) {
        try {
            return future.get(WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            future.cancel(true);
            throw new AssertionError(promise.broken("An attempt did not finish within " + WAIT_SECONDS + " seconds: is a lock never released?"), e);
        } catch (ExecutionException e) {
            throw new AssertionError(promise.broken("An attempt failed: " + e.getCause()), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    void rollbackQuietly(C tx, Throwable failure) {
        try {
            rollback(tx);
        } catch (Exception e) {
            failure.addSuppressed(e);
        }
    }

    private static void assertOutcome(Promise promise, Outcome<String> outcome, Outcome.Status status, String value) {
        assertThat(outcome.status()).as(promise.broken("Expected " + status + (value == null ? "" : "(" + value + ")") + ", got "
                + describe(outcome))).isEqualTo(status);
        if (value != null) {
            assertThat(outcome.value()).as(promise.broken("Expected " + status + "(" + value + "), got " + describe(outcome))).isEqualTo(value);
        }
    }

    private static String describe(Outcome<?> o) {
        if (o == null) {
            return "no outcome";
        }
        switch (o.status()) {
            case EXECUTED:
            case REPLAYED:
                return o.status() + "(" + Results.label(o.value()) + ")";
            case FAILED:
                Outcome.Failed<?> f = (Outcome.Failed<?>) o;
                return "FAILED(" + f.errorMessage() + (f.replayed() ? ", replayed" : ", new") + ")";
            default:
                return o.status().toString();
        }
    }

    private static Throwable catchThrowable(ThrowingRunnable r) {
        try {
            r.run();
            return null;
        } catch (Throwable t) {
            return t;
        }
    }

    private interface ThrowingRunnable {
        void run() throws Exception;
    }

    /** Work that returns a fixed value and counts its runs. */
    private static final class Counting implements Work<String, RuntimeException> {
        private final String value;
        private final AtomicInteger runs = new AtomicInteger();

        Counting(String value) {
            this.value = value;
        }

        @Override
        public String call() {
            runs.incrementAndGet();
            return value;
        }

        int runs() {
            return runs.get();
        }
    }

    /** A failure of the work that the contract's policy does not declare final: it passes through. */
    public static final class PlainFailure extends Exception {
        /** @param message the message */
        public PlainFailure(String message) {
            super(message);
        }
    }

    /** A failure that the contract's policy declares final: it is recorded and replayed. */
    public static final class FinalFailure extends RuntimeException {
        /** @param message the message */
        public FinalFailure(String message) {
            super(message);
        }
    }
}
