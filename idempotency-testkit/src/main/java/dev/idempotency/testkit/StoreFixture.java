package dev.idempotency.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.quicktheories.QuickTheory.qt;

import dev.idempotency.Fingerprint;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.IdempotentCall;
import dev.idempotency.ItemWork;
import dev.idempotency.KeyPolicy;
import dev.idempotency.LeasePolicy;
import dev.idempotency.LeasedIdempotency;
import dev.idempotency.RecoveringLeasedIdempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.ResultCodec;
import dev.idempotency.TxWork;
import dev.idempotency.Work;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeaseOnlyStore;
import dev.idempotency.spi.NoTransaction;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.LeasedCompletion;
import dev.idempotency.spi.LeasingStore;
import dev.idempotency.spi.RecoveringStore;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.RecoveryPoint;
import dev.idempotency.spi.StoredRecord;
import dev.idempotency.spi.TransactionRunner;
import dev.idempotency.spi.TransactionalStore;
import dev.idempotency.testkit.Chunks.Item;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;
import org.quicktheories.core.Gen;

/**
 * The one fixture of the store contract (docs/contract.md): the hooks a store author answers, the
 * kit's clock and engines, and the helpers every part shares. It holds no test: a test class
 * extends it and implements the parts of the contract that its store supports, or extends
 * {@link IdempotencyStoreContract}, which implements them all.
 *
 * <pre>{@code
 * class MyStoreContractTest extends StoreFixture<MyTx>
 *         implements ExampleContract<MyTx>, ConcurrencyContract<MyTx>, StatefulContract<MyTx>,
 *                    ChunkContract<MyTx>, WriteLastContract<MyTx> {
 *     protected IdempotencyStore<MyTx> createStore(InstantSource clock) { return new MyStore(...); }
 *     protected MyTx begin() { return myDatabase.begin(); }
 *     protected void commit(MyTx tx) { tx.commit(); }
 *     protected void rollback(MyTx tx) { tx.rollback(); }
 * }
 * }</pre>
 *
 * <p>The parts, each a JUnit 5 test interface whose tests are named after the promises they check:
 * <ul>
 *   <li>{@link ExampleContract}: one example per promise of transactional mode (section 3), one
 *       transaction at a time;</li>
 *   <li>{@link ConcurrencyContract}: the promises about an open holder of the key, and the
 *       concurrency property (several threads, each in a transaction of its own);</li>
 *   <li>{@link StatefulContract}: random sequences of executions, clock moves and purges, compared
 *       with a model;</li>
 *   <li>{@link ChunkContract}: {@code claimAll} and {@code completeAll} through
 *       {@link Idempotency#executeChunk} (section 9): one example per promise and a chunk property;</li>
 *   <li>{@link WriteLastContract}: {@link dev.idempotency.spi.TransactionalStore#writeLast};</li>
 *   <li>{@link LeasePrimitiveContract}: the primitives of a {@link LeasingStore} (section 4), one
 *       example per promise and a lease property;</li>
 *   <li>{@link LeasedCallContract}: lease mode through the engine, {@link ManagedIdempotency};</li>
 *   <li>{@link RecoveryContract}: the named operations of a {@link RecoveringStore}, and the
 *       recovery worker over it.</li>
 * </ul>
 * A store that is not a {@link LeasingStore} implements neither lease part: a test class that
 * implements one for such a store fails, while {@link IdempotencyStoreContract} skips them.
 *
 * <p>Everything runs through the real engine, {@link Idempotency}, built with the store, the kit's
 * {@link TestClock} and a policy with a retention of {@link #RETENTION} and final failures, so that
 * the contract checks what users get. A lease primitive reads the time from the store's own clock,
 * which may be the kit's {@link TestClock} (the reference store) or a database server's, which no
 * test can move: so a lease that must end is short ({@link #SHORT_LEASE}) and is let run out by
 * {@link #letLeaseRunOut(Duration)}, which both moves the kit's clock and sleeps past it, and a lease
 * that must not end is long ({@link #LIVE_LEASE}). No check depends on how long anything took. A
 * store whose clock is not the kit's must empty itself in {@link #reset()}, since the kit's purge
 * judges expiry by the kit's clock. The properties' effort is set by {@link #effort()}: by default
 * {@link Effort#fromSystemProperty()}. Every failure message starts with the promise it found
 * broken, such as {@code Contract 3.3 (replay)}.
 *
 * <p>A store without transactions, a {@link LeaseOnlyStore}, takes the lease parts alone, with
 * {@link dev.idempotency.spi.NoTransaction} as its transaction type: {@link #begin()} returns
 * {@link dev.idempotency.spi.NoTransaction#NONE}, {@link #commit(Object)} and
 * {@link #rollback(Object)} do nothing, and {@link #reset()} empties the store. The lease parts then
 * leave out what a rolled-back transaction would check, since each primitive takes effect at once.
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
@org.junit.jupiter.api.extension.ExtendWith(PromiseFirst.class)
public abstract class StoreFixture<C> implements ContractPart<C> {

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

    static final int PURGE_BATCH = 1000;
    static final long WAIT_SECONDS = 60;

    final TestClock clock = new TestClock(START);
    IdempotencyStore<C> store;
    KeyPolicy policy;
    StoreLimits storeLimits = StoreLimits.policyDefaults();
    Idempotency<C> idem;
    Idempotency<C> impatient;
    ExecutorService threads;

    /** For subclasses. */
    protected StoreFixture() {
    }

    /** @return this fixture, for the tests of the parts */
    @Override
    public final StoreFixture<C> fixture() {
        return this;
    }

    /**
     * Whether a test of a part the store cannot take (a lease part, for a store that is not a
     * {@link LeasingStore}) is skipped rather than failed: only for {@link IdempotencyStoreContract},
     * which implements every part.
     */
    boolean skipsPartsTheStoreCannotTake() {
        return false;
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
     * The store as another application node sees it, a node whose clock is {@code clock}: for a
     * store that takes a clock, a second store over the same records built with {@code clock}. By
     * default the store itself, right for a store that reads no clock of the application's (a
     * database's, a Redis server's, or the reference store's own). Used by
     * {@code leasesFollowTheStoresClockNotTheNodes}, with clocks hours ahead of and behind the kit's.
     *
     * @param clock the other node's clock
     * @return the store of that node, sharing this store's records
     * @throws Exception if it cannot be created
     */
    protected IdempotencyStore<C> storeOnAnotherNode(InstantSource clock) throws Exception {
        return store;
    }

    /**
     * Why the store does not keep the clock rule yet for the records that lease mode wrote, if it
     * does not: a transactional claim or a purge that meets such a record must judge it by the
     * store's own clock, not by the engine's {@code now} (the clock rule of
     * {@link IdempotencyStore}). A reason given here skips
     * {@code leaseRecordsMetByTransactionalClaimsAndPurgesFollowTheStoresClock} with it. By default
     * none: the store keeps the rule, and the test runs for every store that is both transactional
     * and leasing.
     *
     * @return the reason the store opts out, or empty
     */
    protected Optional<String> clockRuleNotKeptYet() {
        return Optional.empty();
    }

    /**
     * Transactions that the store must refuse, of every kind it can tell apart from a usable one,
     * other than one that has ended (the kit tries that itself): for JDBC a connection in auto-commit
     * mode and a closed one; a read-only one only on a database whose driver honours
     * {@code setReadOnly(true)} (PostgreSQL, MariaDB; elsewhere check {@code isReadOnly()} after
     * setting it). H2 ignores it: the connection stays writable, the store rightly accepts it, and the
     * test would fail on the setup, not on the store.
     * Optional: by default none, and
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

    /**
     * The largest scope, key id and result the store holds: the contract generates keys and results
     * up to these, and builds its engines with them, so that the engine refuses anything larger. By
     * default the policy's ({@link StoreLimits#policyDefaults()}); a store whose schema holds less
     * declares it here, and its users must configure the same limits in their {@code KeyPolicy}.
     *
     * @return the store's limits
     */
    protected StoreLimits limits() {
        return StoreLimits.policyDefaults();
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
        storeLimits = Objects.requireNonNull(limits(), "limits returned null");
        KeyPolicy policy = storeLimits.apply(KeyPolicy.builder()).retention(RETENTION).lockTimeout(LOCK_TIMEOUT).finalFailures(FinalFailure.class).build();
        this.policy = policy;
        if (store instanceof TransactionalStore<C> transactional) {
            idem = Idempotency.builder(transactional).clock(clock).keyPolicy(policy).build();
            impatient = Idempotency.builder(transactional).clock(clock).keyPolicy(policy.toBuilder().lockTimeout(SHORT_LOCK_TIMEOUT).build())
                    .build();
        }
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
                removed = idem != null ? idem.purgeExpired(tx, PURGE_BATCH) : store.purgeExpired(tx, clock.instant(), PURGE_BATCH);
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
     *
     * @throws Exception if the store, a hook or the engine fails
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

    static final Fingerprint A = Fingerprint.of("A");
    static final Fingerprint B = Fingerprint.of("B");

    /**
     * Runs one chunk in a transaction of its own and commits it or rolls it back; an exception of
     * executeChunk (of the store under it) breaks {@code promise}.
     */
    List<Outcome<String>> chunkInTx(Promise promise, List<Item> items, ItemWork<Item, String, RuntimeException> work, boolean commit)
            throws Exception {
        return chunkInTx(promise, idem, items, work, commit);
    }

    /** As {@link #chunkInTx(Promise, List, ItemWork, boolean)}, through {@code engine}. */
    List<Outcome<String>> chunkInTx(Promise promise, Idempotency<C> engine, List<Item> items,
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

    /**
     * How much later than its end by the server's clock a lease may still be judged live, for a
     * store that judges leases by an estimate of its server's clock rather than the clock itself
     * (DynamoDB, whose conditions have no server-side now, estimates it from its responses and
     * judges conservatively: a lease ends once the earliest the server's time can be has passed
     * it). {@link #letLeaseRunOut(Duration)} waits this much longer. Asked each time a lease is let
     * run out. By default zero: the store reads one clock (a database's, Redis', its own).
     *
     * @return zero or positive
     */
    protected Duration leaseJudgementDelay() {
        return Duration.ZERO;
    }

    /**
     * Lets a lease of {@code lease} run out, by the store's clock whichever it is: moves the kit's
     * clock past it (a store whose leases follow the kit's clock) and sleeps past it in real time (a
     * database's own clock), and past the store's {@link #leaseJudgementDelay()}.
     *
     * @param lease the lease, as claimed or extended
     * @throws InterruptedException if interrupted while sleeping
     */
    protected final void letLeaseRunOut(Duration lease) throws InterruptedException {
        Duration past = lease.plus(RUN_OUT_MARGIN).plus(leaseJudgementDelay());
        clock.advance(past);
        Thread.sleep(past.toMillis());
    }

    /**
     * The store as a {@link LeasingStore}. A store that keeps no leases skips the test under
     * {@link IdempotencyStoreContract}, and fails it in a test class that chose a lease part.
     */
    LeasingStore<C> leasing() {
        return capable(LeasingStore.class, "keeps no leases", "lease mode is not checked",
                "a lease part (LeasePrimitiveContract or LeasedCallContract): implement those only for a LeasingStore");
    }

    /**
     * The store as a {@link TransactionalStore}. A store that keeps leases only skips the test under
     * {@link IdempotencyStoreContract}, and fails it in a test class that chose a transactional part.
     */
    TransactionalStore<C> transactional() {
        return capable(TransactionalStore.class, "has no transactional claim", "the transactional modes are not checked",
                "a transactional part: implement those only for a TransactionalStore");
    }

    /**
     * The store as a {@link RecoveringStore}. A store that lists no named operations skips the test
     * under {@link IdempotencyStoreContract}, and fails it in a test class that chose
     * {@link RecoveryContract}.
     */
    RecoveringStore<C> recovering() {
        leasing();
        return capable(RecoveringStore.class, "lists no named operations", "the recovery worker's store primitives are not checked",
                "RecoveryContract: implement it only for a RecoveringStore");
    }

    /** The store as a {@code kind}; if it is not one, skips the test under the whole contract, or fails it in a chosen part. */
    @SuppressWarnings("unchecked")
    private <S> S capable(Class<?> kind, String lacks, String skipped, String chosen) {
        if (!kind.isInstance(store)) {
            String why = store + " " + lacks + " (it is not a " + kind.getSimpleName() + ")";
            assumeTrue(!skipsPartsTheStoreCannotTake(), () -> why + ": " + skipped);
            throw new AssertionError(why + ", but the test class implements " + chosen);
        }
        return (S) store;
    }

    /**
     * Whether the store has transactions: every store but a {@link LeaseOnlyStore}, whose primitives
     * take effect at once, so that the lease parts leave out what a rolled-back transaction checks.
     */
    boolean hasTransactions() {
        return !(store instanceof LeaseOnlyStore);
    }

    /** How many rounds of racing claims {@link #racingLeaseClaimsAcquireOnce} runs, and how many claims race in each. */
    static final int RACE_ROUNDS = 25;
    static final int RACERS = 6;

    /**
     * The atomic claim of a store without transactions: in each round, {@link #RACERS} threads claim
     * a new key at once, each with an owner token of its own; exactly one gets the key, and every
     * other is told that it is held, by the winner's lease. A claim that reads and then writes in two
     * steps lets two claims both find the key free.
     */
    void racingLeaseClaimsAcquireOnce(Promise p) throws Exception {
        LeasingStore<C> s = leasing();
        for (int round = 0; round < RACE_ROUNDS; round++) {
            IdempotencyKey key = IdempotencyKey.of("lease-race", "round-" + round);
            java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(RACERS);
            List<Future<LeaseClaim>> racers = new ArrayList<>();
            for (int r = 0; r < RACERS; r++) {
                String token = "racer-" + r;
                racers.add(threads.submit(() -> {
                    start.await(WAIT_SECONDS, TimeUnit.SECONDS);
                    return committed(tx -> s.claimLease(tx, request(key, A, token, LIVE_LEASE)));
                }));
            }
            List<LeaseClaim> claims = new ArrayList<>();
            for (Future<LeaseClaim> racer : racers) {
                claims.add(await(p, racer));
            }
            List<LeaseClaim> won = claims.stream().filter(c -> c instanceof LeaseClaim.Acquired).toList();
            require(won.size() == 1, p, () -> RACERS + " claims of key " + key + " at once: " + won.size() + " acquired it, expected"
                    + " exactly one; the answers were " + claims);
            Instant end = ((LeaseClaim.Acquired) won.get(0)).leaseUntil();
            for (LeaseClaim c : claims) {
                if (c != won.get(0)) {
                    held(p, c, A, end, 1);
                }
            }
        }
    }

    /**
     * The kit's engine with a clock {@code offset} from the kit's, as an application node whose
     * clock disagrees with the store's; for a store that is both transactional and leasing, else
     * the test is skipped (or fails, with {@link #clockRuleNotKeptYet()}'s reason, skipped).
     */
    Idempotency<C> engineOnAnotherNode(Duration offset) throws Exception {
        assumeTrue(store instanceof LeasingStore && store instanceof TransactionalStore, () -> store + " is not both a transactional and"
                + " a leasing store: no transactional claim meets a record that lease mode wrote");
        @SuppressWarnings("unchecked")
        TransactionalStore<C> transactional = (TransactionalStore<C>) store;
        Optional<String> optOut = Objects.requireNonNull(clockRuleNotKeptYet(), "clockRuleNotKeptYet returned null");
        assumeTrue(optOut.isEmpty(), () -> "the store opts out of the clock rule for lease records: " + optOut.orElse(""));
        InstantSource skewed = () -> clock.instant().plus(offset);
        IdempotencyStore<C> other = Objects.requireNonNull(storeOnAnotherNode(skewed), "storeOnAnotherNode returned null");
        if (!(other instanceof TransactionalStore)) {
            throw new HookFailure(Promise.HOOKS.broken("storeOnAnotherNode returned " + other + ", which has no transactional claim,"
                    + " though the store has"), null);
        }
        @SuppressWarnings("unchecked")
        TransactionalStore<C> node = (TransactionalStore<C>) other;
        return Idempotency.builder(node == store ? transactional : node).clock(skewed).keyPolicy(policy).build();
    }

    /** {@link #storeOnAnotherNode} with a clock {@code offset} from the kit's, as a leasing store. */
    @SuppressWarnings("unchecked")
    LeasingStore<C> leasingOnAnotherNode(Duration offset) throws Exception {
        leasing();
        InstantSource skewed = () -> clock.instant().plus(offset);
        IdempotencyStore<C> other = Objects.requireNonNull(storeOnAnotherNode(skewed), "storeOnAnotherNode returned null");
        if (!(other instanceof LeasingStore)) {
            throw new HookFailure(Promise.HOOKS.broken("storeOnAnotherNode returned " + other + ", which keeps no leases"), null);
        }
        return (LeasingStore<C>) other;
    }

    LeasedIdempotency<C> managed(Duration lease) {
        return settings(LeasedIdempotency.builder(leasing(), transactions()), lease).build();
    }

    /** As {@link #managed}, over the store as a {@link RecoveringStore}: the engine that runs named operations. */
    RecoveringLeasedIdempotency<C> recoveringEngine(Duration lease) {
        return settings(LeasedIdempotency.builder(recovering(), transactions()), lease).build();
    }

    private <B extends LeasedIdempotency.AbstractBuilder<C, B>> B settings(B builder, Duration lease) {
        return builder.clock(clock).keyPolicy(policy).leasePolicy(LeasePolicy.builder().lease(lease).build());
    }

    static LeaseRequest request(IdempotencyKey key, Fingerprint fp, String token, Duration lease) {
        return new LeaseRequest(key, fp, token, lease, RETENTION, LOCK_TIMEOUT);
    }

    /**
     * Claims in a transaction of its own, committed or rolled back.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    LeaseClaim claimLease(IdempotencyKey key, Fingerprint fp, String token, Duration lease, boolean commit) throws Exception {
        return claimLease(key, fp, token, lease, commit, null);
    }

    /** Claims, and if acquired records {@code point} in the same transaction, as the engine's prepare does. */
    LeaseClaim claimLease(IdempotencyKey key, Fingerprint fp, String token, Duration lease, boolean commit, RecoveryPoint point)
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

    /** Withdraws the claim of a store without transactions ({@link LeaseOnlyStore#withdrawClaim}), on its own. */
    boolean withdrawClaim(IdempotencyKey key, String token) {
        return ((LeaseOnlyStore) leasing()).withdrawClaim(NoTransaction.NONE, key, token);
    }

    Optional<Instant> complete(IdempotencyKey key, String token, String result) throws Exception {
        return ended(tx -> leasing().completeLeased(tx, token, new LeasedCompletion(key, RecordStatus.COMPLETED, "contract-codec",
                bytes(result), RETENTION)));
    }

    /**
     * Runs one fenced lease primitive that reports whether it changed the record, in a transaction of its own, committed.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    boolean changed(TxWork<C, Boolean, RuntimeException> primitive) throws Exception {
        return leaseTx(primitive);
    }

    /** Runs one fenced lease primitive that reports a time, in a transaction of its own, committed. */
    Optional<Instant> ended(TxWork<C, Optional<Instant>, RuntimeException> primitive) throws Exception {
        return leaseTx(primitive);
    }

    /** Runs one lease primitive in a transaction of its own, committed. */
    <T> T leaseTx(TxWork<C, T, RuntimeException> primitive) {
        return committed(primitive);
    }

    /**
     * Runs {@code work} in a transaction of its own and commits it; rolls it back if {@code work}
     * throws, and rethrows that unchanged. A failure of the {@link #begin()} or {@link #commit(Object)}
     * hook is thrown as an {@link IdempotencyStoreException}.
     */
    <T, X extends Exception> T committed(TxWork<C, T, X> work) throws X {
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

    static RecoveryPoint point(String state) {
        return new RecoveryPoint("contract-codec", bytes(state));
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static LeaseClaim.Acquired acquired(Promise p, LeaseClaim claim, int attempt, RecoveryPoint resumeFrom) {
        String expected = "Acquired as attempt " + attempt + " resuming from " + resumeFrom;
        assertThat(claim).as(p.broken("Expected " + expected + ", got " + claim)).isInstanceOf(LeaseClaim.Acquired.class);
        LeaseClaim.Acquired a = (LeaseClaim.Acquired) claim;
        assertThat(a.attempt()).as(p.broken("Expected " + expected + ", got " + claim)).isEqualTo(attempt);
        assertThat(a.resumeFrom()).as(p.broken("Expected " + expected + ", got " + claim)).isEqualTo(resumeFrom);
        return a;
    }

    static void held(Promise p, LeaseClaim claim, Fingerprint fp, Instant leaseUntil, int attempts) {
        Instant storeNow = claim instanceof LeaseClaim.Held h ? h.now() : leaseUntil; // the store's own, not compared here
        Instant expiresAt = claim instanceof LeaseClaim.Held h ? h.expiresAt() : null; // optional, not compared here
        LeaseClaim.Held expected = new LeaseClaim.Held(fp, leaseUntil, attempts, storeNow, expiresAt);
        assertThat(claim).as(p.broken("Expected " + expected + ", got " + claim)).isEqualTo(expected);
    }

    static StoredRecord found(Promise p, LeaseClaim claim, Fingerprint fp, RecordStatus status, String result) {
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

    /** Runs a stateful property at least {@code examples} times; a failure reports the seed to repeat it. */
    <T> void sequenceProperty(String what, int examples, Gen<T> gen, java.util.function.Consumer<T> property) {
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

    final AtomicInteger examplesRun = new AtomicInteger();

    /** QuickTheories skips examples it has generated before; run until the effort is reached. */
    <T> void runAtLeast(int examples, long seed, Gen<T> gen, java.util.function.Consumer<T> property) {
        examplesRun.set(0);
        for (long round = 0; examplesRun.get() < examples && round < 100; round++) {
            qt().withFixedSeed(seed + round).withExamples(examples - examplesRun.get()).withShrinkCycles(0)
                    .forAll(gen)
                    .checkAssert(property);
        }
    }

    /** The system property that fixes the properties' random seed, to repeat a failure. */
    public static final String SEED_PROPERTY = "idempotency.testkit.seed";

    static long seed() {
        String fixed = System.getProperty(SEED_PROPERTY);
        return fixed == null || fixed.isBlank() ? System.nanoTime() : Long.parseLong(fixed.strip());
    }

    /** QuickTheories reports a failure as text; the contract keeps the failure itself. */
    volatile AssertionError lastFailure;

    Throwable failureOf(AssertionError fromQuickTheories) {
        AssertionError last = lastFailure;
        lastFailure = null;
        return last != null ? last : fromQuickTheories;
    }

    static String promiseOf(AssertionError failure) {
        String m = String.valueOf(failure.getMessage());
        return m.substring(0, Math.max(0, m.indexOf(':')));
    }

    /** A failing sequence, already made as short as the contract could make it. */
    static final class SequenceFailure extends AssertionError {
        SequenceFailure(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * Runs one generated sequence; if it breaks a promise, shortens it (dropping steps one at a time
     * while the same promise still breaks) and fails with the shortest one found.
     */
    <S> void runShrinking(List<S> generated, java.util.function.Function<List<S>, AssertionError> check,
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

    /** Fails the test with {@code promise} broken, and {@code detail}, unless {@code ok}: the message starts with the promise. */
    static void require(boolean ok, Promise promise, java.util.function.Supplier<String> detail) {
        if (!ok) {
            throw new AssertionError(promise.broken(detail.get()));
        }
    }

    /**
     * The key's committed record, as the store's claim finds it from a transaction of its own
     * (rolled back); {@code null} if the claim acquired the key, that is, if there is none.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    dev.idempotency.spi.StoredRecord committedRecord(IdempotencyKey key, Fingerprint fp) throws Exception {
        C tx = open();
        try {
            Instant now = clock.instant();
            dev.idempotency.spi.Claim claim = transactional().claim(tx, new dev.idempotency.spi.ClaimRequest(key, fp, now, now.plus(RETENTION),
                    LOCK_TIMEOUT));
            return claim instanceof dev.idempotency.spi.Claim.Existing e ? e.record() : null;
        } finally {
            rollback(tx);
        }
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
    static <C> Outcome<Object> execute(Idempotency<C> engine, IdempotencyKey key, Fingerprint fp, C tx, ResultCodec<Object> codec,
                                                Work<Object, ? extends Exception> work) throws Exception {
        return codec == null ? engine.execute(IdempotentCall.of(key, fp), tx, work) : engine.execute(IdempotentCall.of(key, codec).withFingerprint(fp), tx, work);
    }

    /** As {@link #inTx}, for results of any type. */
    Outcome<Object> inTxAny(IdempotencyKey key, Fingerprint fp, ResultCodec<Object> codec, Work<Object, ? extends Exception> work,
                                    boolean commit) throws Exception {
        return inOwnTx(tx -> execute(idem, key, fp, tx, codec, work), commit);
    }

    /**
     * Commits a lease claim of {@code key} with fingerprint A, a live lease and twice the retention,
     * as an attempt in lease mode would. A store whose clock is not the kit's (a database server's)
     * judged the lease by its own; the kit's clock is then set to the store's, so that the engine's
     * transactional attempts see the record live as well.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    LeaseClaim.Acquired leaseHeldFor(IdempotencyKey key) throws Exception {
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
    Outcome<String> inTx(Idempotency<C> engine, IdempotencyKey key, Fingerprint fp, Work<String, ?> work, boolean commit)
            throws Exception {
        return inOwnTx(tx -> engine.execute(IdempotentCall.of(key, fp), tx, work), commit);
    }

    /**
     * Runs one execute in a transaction of its own; commits unless told not to or the outcome is InProgress.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    <T> Outcome<T> inOwnTx(TxWork<C, Outcome<T>, Exception> call, boolean commit) throws Exception {
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

    int purge(int limit) {
        return committed(tx -> idem.purgeExpired(tx, limit));
    }

    static <T> T await(Promise promise, Future<T> future) {
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

    static void assertOutcome(Promise promise, Outcome<String> outcome, Outcome.Status status, String value) {
        assertThat(outcome.status()).as(promise.broken("Expected " + status + (value == null ? "" : "(" + value + ")") + ", got "
                + describe(outcome))).isEqualTo(status);
        if (value != null) {
            assertThat(outcome.value()).as(promise.broken("Expected " + status + "(" + value + "), got " + describe(outcome))).isEqualTo(value);
        }
    }

    static String describe(Outcome<?> o) {
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

    static Throwable catchThrowable(ThrowingRunnable r) {
        try {
            r.run();
            return null;
        } catch (Throwable t) {
            return t;
        }
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    /** Work that returns a fixed value and counts its runs. */
    static final class Counting implements Work<String, RuntimeException> {
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
