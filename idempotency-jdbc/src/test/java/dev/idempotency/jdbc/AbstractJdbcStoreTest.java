package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.AbandonedClaimException;
import dev.idempotency.Fingerprint;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.IdempotentCall;
import dev.idempotency.InvalidKeyException;
import dev.idempotency.KeyPolicy;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.MissingTableException;
import dev.idempotency.Outcome;
import dev.idempotency.RecordedFailureException;
import dev.idempotency.ResultCodec;
import dev.idempotency.ResultCodecException;
import dev.idempotency.ResultTooLargeException;
import dev.idempotency.TransactionRequiredException;
import dev.idempotency.testkit.TestClock;
import java.io.IOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import dev.idempotency.testsupport.LazyPool;
import dev.idempotency.testsupport.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * What only a JDBC store can break of its behaviour contract (docs/contract.md, sections 3, 5, 6 and
 * 7): the caller's transaction and connection, savepoints, statement counts, lock waits, codecs and
 * limits against real columns, SQL errors. Written once and run on every database by a nested class
 * of that database's test class ({@code HsqldbTest.Store}, ...), given its {@link TestDatabase}.
 * What the testkit's contract proves of every store (replay, rollback, expiry, scopes, keys of the
 * largest size, results of every type, purge, concurrent holders) runs there ({@code Contract}), not
 * here again.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class AbstractJdbcStoreTest {

    /** The database under test, and every fact about it the tests ask. */
    protected final TestDatabase database;

    private final LazyPool pool;

    /** @param database the database under test: a pool of 24 connections on it is opened when the first test needs it */
    protected AbstractJdbcStoreTest(TestDatabase database) {
        this.database = database;
        this.pool = database.lazyPool("store");
    }

    /** @return the pool on the database under test */
    protected DataSource dataSource() {
        return pool.get();
    }

    /** Every test starts at this instant (a daylight-saving change in several zones). */
    protected static final Instant START = Instant.parse("2026-03-29T01:30:00Z");

    protected final TestClock clock = new TestClock(START);
    protected final AtomicInteger executions = new AtomicInteger();
    protected JdbcIdempotencyStore store = JdbcIdempotencyStore.ofDefaults();
    protected Idempotency<Connection> idem;

    @BeforeEach
    void resetTables() throws Exception {
        DataSource ds = dataSource();
        store.createTableIfMissing(ds);
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(true);
            try {
                s.execute("CREATE TABLE effect (k VARCHAR(400) NOT NULL, note VARCHAR(100))");
            } catch (SQLException alreadyThere) {
                // created by an earlier test
            }
            s.execute("DELETE FROM effect");
            s.execute("DELETE FROM " + store.table());
        }
        executions.set(0);
        clock.set(START); // one instance serves every test of the class: each starts at the same time
        idem = engine(KeyPolicy.ofDefaults());
    }

    @AfterAll
    void close() {
        pool.close();
    }

    protected Idempotency<Connection> engine(KeyPolicy policy) {
        return Idempotency.builder(store).keyPolicy(policy).clock(clock).build();
    }

    /** The business change: one row in {@code effect}, and a receipt naming the execution. */
    protected String work(Connection c, IdempotencyKey key) throws SQLException {
        return DuplicateClients.insertEffect(executions, c, key);
    }

    protected int effects() throws SQLException {
        return Tx.count(dataSource(), "SELECT COUNT(*) FROM effect");
    }

    protected int records() throws SQLException {
        return Tx.count(dataSource(), "SELECT COUNT(*) FROM " + store.table());
    }

    protected static IdempotencyKey key(String id) {
        return IdempotencyKey.of("tenant-1", id);
    }

    // ---- contract 3 (docs/contract.md): transactional mode --------------------------------------

    @Test
    void sameKeyWithAnotherFingerprintIsAMismatchAndTheTransactionStaysUsable() throws Exception {
        IdempotencyKey key = key("order-3");
        Tx.commit(dataSource(), c -> idem.execute(IdempotentCall.of(key, Fingerprint.of("amount=10")), c, () -> work(c, key)));
        Outcome<String> misuse = Tx.commit(dataSource(), c -> {
            Outcome<String> o = idem.execute(IdempotentCall.of(key, Fingerprint.of("amount=99")), c, () -> work(c, key));
            work(c, IdempotencyKey.of("tenant-1", "unrelated")); // the transaction is still usable
            return o;
        });

        assertThat(misuse).isEqualTo(new Outcome.Mismatch<>(key));
        assertThatThrownBy(misuse::value).isInstanceOf(dev.idempotency.KeyMismatchException.class)
                .hasMessageContaining("tenant-1").hasMessageContaining("order-3");
        assertThat(executions).hasValue(2);
        assertThat(effects()).isEqualTo(2);
    }

    @Test
    void noFingerprintThenAFingerprintIsAMismatch() throws Exception {
        IdempotencyKey key = key("order-3b");
        Tx.commit(dataSource(), c -> idem.execute(key, c, () -> work(c, key)));
        Outcome<String> o = Tx.commit(dataSource(), c -> idem.execute(IdempotentCall.of(key, Fingerprint.of("x")), c, () -> work(c, key)));
        assertThat(o.status()).isEqualTo(Outcome.Status.MISMATCH);
    }

    @Test
    void aRecordedTimeIsTheSameInstantInTheFirstOutcomeAndInEveryReplay() throws Exception {
        Idempotency<Connection> strict = engine(KeyPolicy.builder().finalFailures(CardDeclined.class).build());
        clock.set(START.plusNanos(123_456_789)); // a clock finer than the stored milliseconds
        IdempotencyKey failing = key("time-failed");
        IdempotencyKey done = key("time-done");
        Outcome<String> first = Tx.commit(dataSource(), c -> strict.execute(failing, c, () -> {
            throw new CardDeclined("declined");
        }));
        Tx.commit(dataSource(), c -> strict.execute(done, c, () -> "v"));
        clock.advance(Duration.ofMinutes(1));
        Outcome<String> failedAgain = Tx.commit(dataSource(), c -> strict.execute(failing, c, () -> "not run"));
        Outcome<String> replayed = Tx.commit(dataSource(), c -> strict.execute(done, c, () -> "not run"));

        Instant recorded = START.plusMillis(123);
        assertThat(((Outcome.Failed<String>) first).recordedAt()).isEqualTo(recorded);
        assertThat(((Outcome.Failed<String>) failedAgain).recordedAt()).isEqualTo(recorded);
        assertThat(((Outcome.Replayed<String>) replayed).recordedAt()).isEqualTo(recorded);
    }

    @Test
    void aFailureThatIsNotFinalPassesThroughEvenWithFinalFailuresDeclared() throws Exception {
        Idempotency<Connection> strict = engine(KeyPolicy.builder().finalFailures(CardDeclined.class).build());
        IdempotencyKey key = key("charge-2");
        IllegalStateException boom = new IllegalStateException("boom");
        try (Connection c = dataSource().getConnection()) {
            c.setAutoCommit(false);
            assertThatThrownBy(() -> strict.execute(key, c, () -> {
                work(c, key);
                throw boom;
            })).isSameAs(boom);
            c.rollback();
        }
        assertThat(records()).isZero();
    }

    /** The executor's {@code find}, for dialect authors: the key's record as the connection sees it, or nothing. */
    @Test
    void theDialectFindsARecordAsTheConnectionSeesIt() throws Exception {
        IdempotencyKey key = key("found");
        Tx.commit(dataSource(), c -> idem.execute(key, c, () -> "v"));
        try (Connection c = dataSource().getConnection()) {
            dev.idempotency.jdbc.dialect.SqlDialect d = store.dialect().orElse(dev.idempotency.jdbc.dialect.Dialects.detect(c));
            assertThat(dev.idempotency.jdbc.internal.JdbcExecutor.of(d).find(c, store.table(), key)).hasValueSatisfying(r -> {
                assertThat(r.key()).isEqualTo(key);
                assertThat(r.status()).isEqualTo(dev.idempotency.spi.RecordStatus.COMPLETED);
            });
            assertThat(dev.idempotency.jdbc.internal.JdbcExecutor.of(d).find(c, store.table(), key("absent"))).isEmpty();
        }
    }

    /**
     * With final failures declared, the engine sets a savepoint before the work; the store ends it
     * with the attempt: released when the work returns, rolled back to for a final failure. A
     * savepoint left open holds a subtransaction on PostgreSQL until the commit, one more per key
     * of a long transaction.
     */
    @Test
    void theSavepointOfAFinalFailurePolicyIsReleasedWhenTheWorkReturns() throws Exception {
        Idempotency<Connection> strict = engine(KeyPolicy.builder().finalFailures(CardDeclined.class).build());
        List<String> calls = new ArrayList<>();
        try (Connection raw = dataSource().getConnection()) {
            raw.setAutoCommit(false);
            Connection c = savepointsRecorded(raw, calls);
            assertThat(strict.execute(key("sp-done"), c, () -> "v").isExecuted()).isTrue();
            assertThat(calls).as("a work that returns").containsExactly("setSavepoint", "releaseSavepoint");
            calls.clear();
            assertThat(strict.<String, CardDeclined>execute(key("sp-declined"), c, () -> {
                throw new CardDeclined("declined");
            })).isInstanceOf(Outcome.Failed.class);
            assertThat(calls).as("a final failure").containsExactly("setSavepoint", "rollback");
            raw.commit();
        }
    }

    /**
     * In a transaction the library runs, no savepoint is taken even with final failures declared: a
     * final failure rolls the transaction back whole, its writes with it, and is recorded in a
     * second transaction, where the work does not run.
     */
    @Test
    void aTransactionTheLibraryRunsTakesNoSavepointAndRecordsAFinalFailureWithoutItsWrites() throws Exception {
        List<String> calls = new CopyOnWriteArrayList<>();
        javax.sql.DataSource source = dataSource();
        javax.sql.DataSource recorded = (javax.sql.DataSource) java.lang.reflect.Proxy.newProxyInstance(
                javax.sql.DataSource.class.getClassLoader(), new Class<?>[] {javax.sql.DataSource.class}, (proxy, method, args) -> {
                    Object answer;
                    try {
                        answer = method.invoke(source, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                    return answer instanceof Connection c ? savepointsRecorded(c, calls) : answer;
                });
        ManagedIdempotency<Connection> managed = ManagedIdempotency.of(engine(KeyPolicy.builder().finalFailures(CardDeclined.class).build()),
                JdbcTransactions.of(recorded));
        IdempotencyKey done = key("managed-done");
        IdempotencyKey declined = key("managed-declined");
        assertThat(managed.execute(done, c -> work(c, done)).isExecuted()).isTrue();
        Outcome<String> failed = managed.execute(declined, c -> {
            work(c, declined);
            throw new CardDeclined("declined");
        });
        assertThat(failed).isInstanceOf(Outcome.Failed.class);
        assertThat(calls).as("savepoint calls, for a work that returns and for a final failure").isEmpty();
        assertThat(effects()).as("the declined work's write is rolled back").isEqualTo(1);
        assertThat(records()).isEqualTo(2);
        Outcome<String> again = managed.execute(declined, c -> work(c, declined));
        assertThat(again).isInstanceOfSatisfying(Outcome.Failed.class, f -> assertThat(f.replayed()).isTrue());
        assertThat(effects()).as("the retry's work did not run").isEqualTo(1);
    }

    /** @return {@code target}, with each savepoint call's name added to {@code calls} */
    private static Connection savepointsRecorded(Connection target, List<String> calls) {
        return (Connection) java.lang.reflect.Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, method, args) -> {
                    if (method.getName().contains("Savepoint") || (method.getName().equals("rollback") && args != null)) {
                        calls.add(method.getName());
                    }
                    try {
                        return method.invoke(target, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    @Test
    void aCustomCodecRoundTripsAndAnotherCodecIsRefusedOnReplay() throws Exception {
        ResultCodec<Receipt> codec = ResultCodec.of("receipt-v1", r -> r.id() + ";" + r.cents(),
                s -> new Receipt(s.split(";")[0], Long.parseLong(s.split(";")[1])));
        IdempotencyKey key = key("custom-codec");
        Tx.commit(dataSource(), c -> idem.execute(IdempotentCall.of(key, codec), c, () -> new Receipt("r-1", 1250)));
        Outcome<Receipt> replay = Tx.commit(dataSource(), c -> idem.execute(IdempotentCall.of(key, codec), c, () -> new Receipt("no", 0)));
        assertThat(replay.value()).isEqualTo(new Receipt("r-1", 1250));
        assertThatThrownBy(() -> Tx.commit(dataSource(), c -> idem.execute(key, c, () -> "x")))
                .isInstanceOf(ResultCodecException.class).hasMessageContaining("receipt-v1");
    }

    @Test
    void aResultTypeThatChangedSinceTheRecordIsATypedErrorNamingBothTypesWhenTheCallNamesItsCodec() throws Exception {
        IdempotencyKey key = key("type-changed");
        Tx.commit(dataSource(), c -> idem.execute(key, c, () -> 42)); // recorded as an Integer, no codec given
        assertThatThrownBy(() -> Tx.commit(dataSource(), c -> idem.execute(IdempotentCall.of(key, ResultCodec.string()), c,
                () -> "forty-two")))
                .isInstanceOf(ResultCodecException.class)
                .hasMessageContaining("codec 'int' (java.lang.Integer)")
                .hasMessageContaining("expects java.lang.String")
                .satisfies(e -> assertThat(((ResultCodecException) e).keyId()).isEqualTo("type-changed"));
        Outcome<Integer> asRecorded = Tx.commit(dataSource(), c -> idem.execute(IdempotentCall.of(key, ResultCodec.integer()), c, () -> 0));
        assertThat(asRecorded.value()).isEqualTo(42);
        assertThat(executions).hasValue(0);
    }

    @Test
    void aTypeWithoutABuiltInCodecAsksForOneAndLeavesNothingAfterRollback() throws Exception {
        IdempotencyKey key = key("untyped");
        assertThatThrownBy(() -> Tx.commit(dataSource(), c -> idem.execute(key, c, () -> {
            work(c, key);
            return new Receipt("r", 1);
        }))).isInstanceOf(ResultCodecException.class)
                .hasMessageContaining(Receipt.class.getName())
                .hasMessageContaining("ResultCodec.of");
        assertThat(records()).isZero();
        assertThat(effects()).isZero();
    }

    @Test
    void aCodecThatThrowsLeavesNothingAfterRollback() throws Exception {
        RuntimeException broken = new RuntimeException("cannot encode");
        ResultCodec<String> codec = ResultCodec.of("broken", s -> {
            throw broken;
        }, s -> s);
        IdempotencyKey key = key("codec-throws");
        assertThatThrownBy(() -> Tx.commit(dataSource(), c -> idem.execute(IdempotentCall.of(key, codec), c, () -> work(c, key))))
                .isInstanceOf(ResultCodecException.class)
                .hasCause(broken);
        assertThat(records()).isZero();
        assertThat(effects()).isZero();
    }

    @Test
    void aResultOverTheLimitIsRefusedBeforeItIsWritten() throws Exception {
        Idempotency<Connection> small = engine(KeyPolicy.builder().maxResultBytes(16).build());
        IdempotencyKey key = key("too-large");
        assertThatThrownBy(() -> Tx.commit(dataSource(), c -> small.execute(key, c, () -> {
            work(c, key);
            return "x".repeat(17);
        }))).isInstanceOf(ResultTooLargeException.class).hasMessageContaining("17 bytes").hasMessageContaining("16");
        Outcome<String> fits = Tx.commit(dataSource(), c -> small.execute(key, c, () -> "x".repeat(16)));
        assertThat(fits.isExecuted()).isTrue();
        assertThat(effects()).isZero();
    }

    @Test
    void aCallerWhoCommitsAfterARefusedResultLeavesNoKeyStuckInProgress() throws Exception {
        Idempotency<Connection> small = engine(KeyPolicy.builder().maxResultBytes(4).build());
        IdempotencyKey tooLarge = key("stuck-too-large");
        IdempotencyKey unencodable = key("stuck-codec");
        ResultCodec<String> broken = ResultCodec.of("broken", s -> {
            throw new IllegalStateException("cannot encode");
        }, s -> s);
        try (Connection c = dataSource().getConnection()) {
            c.setAutoCommit(false);
            assertThatThrownBy(() -> small.execute(tooLarge, c, () -> "too large")).isInstanceOf(ResultTooLargeException.class);
            assertThatThrownBy(() -> small.execute(IdempotentCall.of(unencodable, broken), c,
                    () -> "x")).isInstanceOf(ResultCodecException.class);
            c.commit(); // against the advice: the claims must not survive it
        }
        assertThat(records()).isZero();
        assertThat(Tx.commit(dataSource(), c -> small.execute(tooLarge, c, () -> "ok")).isExecuted()).isTrue();
        assertThat(Tx.commit(dataSource(), c -> small.execute(unencodable, c, () -> "ok")).isExecuted()).isTrue();
    }

    @Test
    void aWorkThatCommitsTheCallersTransactionStrandsTheKeyAndEveryRetryIsRefusedByName() throws Exception {
        IdempotencyKey key = key("commits-itself");
        Tx.rollback(dataSource(), c -> idem.execute(key, c, () -> {
            String receipt = work(c, key);
            c.commit(); // against the rule: the claim and the write are committed, the result is not
            return receipt;
        }));
        assertThatThrownBy(() -> Tx.commit(dataSource(), c -> idem.execute(key, c, () -> work(c, key))))
                .isInstanceOf(AbandonedClaimException.class)
                .hasMessageContaining("committed or rolled back the caller's transaction")
                .hasMessageContaining("delete the key's record")
                .satisfies(e -> assertThat(((AbandonedClaimException) e).keyId()).isEqualTo("commits-itself"));
        assertThat(executions).hasValue(1);
        assertThat(effects()).isEqualTo(1);

        clock.advance(KeyPolicy.DEFAULT_RETENTION); // the stranded claim expires: the key counts as new, as the message says
        assertThat(Tx.commit(dataSource(), c -> idem.execute(key, c, () -> work(c, key))).isExecuted()).isTrue();
    }

    @Test
    void aWorkThatSwitchesAutoCommitOnIsRefusedWhenItReturnsAndTheKeyStaysRefused() throws Exception {
        IdempotencyKey key = key("auto-commits-itself");
        try (Connection c = dataSource().getConnection()) {
            c.setAutoCommit(false);
            assertThatThrownBy(() -> idem.execute(key, c, () -> {
                String receipt = work(c, key);
                c.setAutoCommit(true); // against the rule: commits the claim and the write
                return receipt;
            })).isInstanceOf(AbandonedClaimException.class).hasMessageContaining("auto-commit");
        }
        assertThatThrownBy(() -> Tx.commit(dataSource(), c -> idem.execute(key, c, () -> work(c, key))))
                .isInstanceOf(AbandonedClaimException.class);
        assertThat(executions).as("the work never runs a second time").hasValue(1);
        assertThat(effects()).isEqualTo(1);
    }

    @Test
    void theLibraryNeverCommitsRollsBackOrChangesTheConnection() throws Exception {
        IdempotencyKey key = key("hands-off");
        try (Connection c = dataSource().getConnection()) {
            c.setAutoCommit(false);
            int isolation = c.getTransactionIsolation();
            boolean readOnly = c.isReadOnly();
            idem.execute(key, c, () -> work(c, key));
            assertThat(c.getAutoCommit()).isFalse();
            assertThat(c.getTransactionIsolation()).isEqualTo(isolation);
            assertThat(c.isReadOnly()).isEqualTo(readOnly);
            assertThat(c.isClosed()).isFalse();
            assertThat(records()).as("nothing is visible before the caller commits").isZero();
            c.rollback();
        }
        assertThat(records()).isZero();
        assertThat(effects()).isZero();
    }

    @Test
    void aFirstExecutionAndAReplayCostTheDocumentedNumberOfStatements() throws Exception {
        IdempotencyKey key = key("counted");
        AtomicInteger statements = new AtomicInteger();
        int first;
        int replay;
        try (Connection raw = dataSource().getConnection()) {
            raw.setAutoCommit(false);
            idem.execute(key("warm-up"), raw, () -> "w"); // dialect detection, driver caches
            raw.commit();
            Connection c = CountingConnection.wrap(raw, statements);
            statements.set(0);
            assertThat(idem.execute(key, c, () -> "v").isExecuted()).isTrue();
            first = statements.getAndSet(0);
            raw.commit();
            assertThat(idem.execute(key, c, () -> "not run").status()).isEqualTo(Outcome.Status.REPLAYED);
            replay = statements.getAndSet(0);
            raw.commit();
        }
        assertThat(first).as("statements per first execution").isEqualTo(database.statements().firstExecution());
        assertThat(replay).as("statements per replay").isEqualTo(database.statements().replay());
    }

    /**
     * Claims committed without their result are listed by the operator's query while they refuse
     * their keys, and counted by the purge that deletes them once expired, through the listener.
     */
    @Test
    void theOperatorsQueryListsAbandonedClaimsAndThePurgeCountsThem() throws Exception {
        List<Integer> purged = new CopyOnWriteArrayList<>();
        Idempotency<Connection> heard = Idempotency.builder(store).clock(clock).listener(new IdempotencyListener() {
            @Override
            public void onAbandonedClaimsPurged(int count) {
                purged.add(count);
            }
        }).build();
        for (String id : List.of("abandoned-1", "abandoned-2")) {
            IdempotencyKey key = key(id);
            Tx.rollback(dataSource(), c -> heard.execute(key, c, () -> {
                String receipt = work(c, key);
                c.commit(); // against the rule: the claim is committed without its result
                return receipt;
            }));
        }
        Tx.commit(dataSource(), c -> heard.execute(key("completed"), c, () -> "v"));

        // tag::abandoned-claims[]
        String abandonedClaims = "SELECT scope, key_id, created_at, expires_at FROM idempotency_record"
                + " WHERE status = 'IN_PROGRESS' AND lease_until IS NULL ORDER BY created_at";
        // end::abandoned-claims[]
        List<String> listed = new ArrayList<>();
        try (Connection c = dataSource().getConnection(); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(abandonedClaims.replace("idempotency_record", store.table().toString()))) {
            while (rs.next()) {
                listed.add(rs.getString("key_id"));
            }
        }
        assertThat(listed).containsExactlyInAnyOrder("abandoned-1", "abandoned-2");

        assertThat(Tx.<Integer>commit(dataSource(), c -> heard.purgeExpired(c, 10))).isZero();
        clock.advance(KeyPolicy.DEFAULT_RETENTION);
        assertThat(Tx.<Integer>commit(dataSource(), c -> heard.purgeExpired(c, 10))).isEqualTo(3);
        assertThat(purged).containsExactly(2);
        assertThat(Tx.<Integer>commit(dataSource(), c -> heard.purgeExpired(c, 10))).isZero();
        assertThat(purged).as("a purge that finds none tells nothing").containsExactly(2);
    }

    // ---- concurrent duplicates ----------------------------------------------------------------------

    @Test
    void aLockWaitThatRunsOutGivesInProgressAndTheTransactionIsAsDocumented() throws Exception {
        Idempotency<Connection> impatient = engine(KeyPolicy.builder().lockTimeout(Duration.ofSeconds(1)).build());
        IdempotencyKey key = key("concurrent-timeout");
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (Connection first = dataSource().getConnection()) {
            first.setAutoCommit(false);
            impatient.execute(key, first, () -> work(first, key));
            Future<Boolean> second = pool.submit(() -> {
                try (Connection c = dataSource().getConnection()) {
                    c.setAutoCommit(false);
                    Outcome<String> o = impatient.execute(key, c, () -> work(c, key));
                    assertThat(o).isEqualTo(new Outcome.InProgress<>(key));
                    assertThatThrownBy(o::value).isInstanceOf(dev.idempotency.KeyInProgressException.class);
                    boolean usable;
                    try (Statement s = c.createStatement()) {
                        s.executeQuery("SELECT COUNT(*) FROM effect").close();
                        usable = true;
                    } catch (SQLException aborted) {
                        usable = false;
                    }
                    c.rollback(); // what the documentation asks for after InProgress
                    return usable;
                }
            });
            assertThat(second.get(15, TimeUnit.SECONDS)).isEqualTo(database.transactionUsableAfterLockTimeout());
            first.commit();
        } finally {
            pool.shutdownNow();
        }
        Outcome<String> later = Tx.commit(dataSource(), c -> impatient.execute(key, c, () -> work(c, key)));
        assertThat(later.status()).isEqualTo(Outcome.Status.REPLAYED);
        assertThat(executions).hasValue(1);
    }

    @Test
    void sixteenThreadsFiftyKeysEightAttemptsEachRunTheWorkOncePerKey() throws Exception {
        int keys = 50;
        int attempts = 8;
        Idempotency<Connection> patient = engine(KeyPolicy.builder().lockTimeout(Duration.ofSeconds(10)).build());
        Map<IdempotencyKey, AtomicInteger> runs = new ConcurrentHashMap<>();
        Map<IdempotencyKey, Set<String>> seen = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int k = 0; k < keys; k++) {
                IdempotencyKey key = key("hot-" + k);
                CountDownLatch start = new CountDownLatch(1);
                for (int a = 0; a < attempts; a++) {
                    futures.add(pool.submit(() -> {
                        start.await();
                        Outcome<String> o = retryingAttempt(patient, key, runs);
                        seen.computeIfAbsent(key, x -> ConcurrentHashMap.newKeySet()).add(o.value());
                        return null;
                    }));
                }
                start.countDown();
            }
            for (Future<?> f : futures) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(runs).hasSize(keys);
        runs.forEach((key, n) -> assertThat(n.get()).as("committed executions of %s", key).isEqualTo(1));
        seen.forEach((key, values) -> assertThat(values).as("values seen for %s", key).hasSize(1));
        assertThat(effects()).isEqualTo(keys);
        assertThat(records()).isEqualTo(keys);
    }

    /**
     * A client that retries after InProgress, as it would after a timeout; the managed runner retries
     * the whole transaction on a conflict. {@code Executed} comes only from a committed transaction.
     */
    private Outcome<String> retryingAttempt(Idempotency<Connection> engine, IdempotencyKey key,
                                            Map<IdempotencyKey, AtomicInteger> committedRuns) throws Exception {
        dev.idempotency.ManagedIdempotency<Connection> managed = dev.idempotency.ManagedIdempotency.builder(engine,
                JdbcTransactions.of(dataSource())).retryPolicy(dev.idempotency.RetryPolicy.builder().maxAttempts(50).build()).build();
        for (int round = 0; ; round++) {
            Outcome<String> o = managed.execute(key, c -> work(c, key));
            if (o.isExecuted()) {
                committedRuns.computeIfAbsent(key, x -> new AtomicInteger()).incrementAndGet();
            }
            if (o.hasValue() || round > 50) {
                return o;
            }
            Thread.sleep(java.util.concurrent.ThreadLocalRandom.current().nextInt(1, 10 + 5 * Math.min(round, 20))); // jittered back-off
        }
    }

    // ---- contract 7 (docs/contract.md): bad input and faults ------------------------------------

    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class BadInput {

        @Test
        void invalidKeysAreRefusedBeforeAnyDatabaseAccess() throws Exception {
            Connection closed = dataSource().getConnection();
            closed.close(); // any database access would fail on it with another exception
            assertThatThrownBy(() -> idem.execute((IdempotencyKey) null, closed, () -> "x"))
                    .isInstanceOf(NullPointerException.class).hasMessage("key"); // a null object is the caller's mistake
            assertThatThrownBy(() -> IdempotencyKey.of("tenant", null))
                    .isInstanceOf(InvalidKeyException.class).hasMessageContaining("must not be null");
            assertThatThrownBy(() -> idem.execute(key(""), closed, () -> "x"))
                    .isInstanceOf(InvalidKeyException.class).hasMessageContaining("blank");
            assertThatThrownBy(() -> idem.execute(key("   "), closed, () -> "x"))
                    .isInstanceOf(InvalidKeyException.class).hasMessageContaining("blank");
            assertThatThrownBy(() -> idem.execute(key("k".repeat(256)), closed, () -> "x"))
                    .isInstanceOf(InvalidKeyException.class).hasMessageContaining("256").hasMessageContaining("255");
            assertThatThrownBy(() -> idem.execute(key("bad\nkey"), closed, () -> "x"))
                    .isInstanceOf(InvalidKeyException.class).hasMessageContaining("control character")
                    .hasMessageContaining("bad\\u000akey");
            assertThatThrownBy(() -> idem.execute(key("with space"), closed, () -> "x"))
                    .isInstanceOf(InvalidKeyException.class).hasMessageContaining("a space");
            assertThatThrownBy(() -> idem.execute(key("café"), closed, () -> "x"))
                    .isInstanceOf(InvalidKeyException.class).hasMessageContaining("non-ASCII");
            assertThatThrownBy(() -> idem.execute(IdempotencyKey.of("", "id"), closed, () -> "x"))
                    .isInstanceOf(InvalidKeyException.class).hasMessageContaining("scope");
            assertThat(executions).hasValue(0);
        }

        @Test
        void anAutoCommitConnectionIsRefusedAndNothingIsWritten() throws Exception {
            IdempotencyKey key = key("auto-commit");
            try (Connection c = dataSource().getConnection()) {
                c.setAutoCommit(true);
                assertThatThrownBy(() -> idem.execute(key, c, () -> work(c, key)))
                        .isInstanceOf(TransactionRequiredException.class)
                        .hasMessageContaining("auto-commit")
                        .satisfies(e -> {
                            assertThat(((TransactionRequiredException) e).keyId()).isEqualTo("auto-commit");
                            assertThat(((TransactionRequiredException) e).scope()).isEqualTo("tenant-1");
                        });
                assertThat(c.getAutoCommit()).isTrue();
            }
            assertThat(records()).isZero();
            assertThat(executions).hasValue(0);
        }

        @Test
        void aClosedConnectionIsRefused() throws Exception {
            Connection c = dataSource().getConnection();
            c.setAutoCommit(false);
            c.close();
            assertThatThrownBy(() -> idem.execute(key("closed"), c, () -> "x"))
                    .isInstanceOf(TransactionRequiredException.class).hasMessageContaining("closed");
            assertThat(executions).hasValue(0);
        }

        @Test
        void aMissingTableIsNamedWithHowToCreateIt() throws Exception {
            Idempotency<Connection> elsewhere = Idempotency.builder(JdbcIdempotencyStore.builder().table("no_such_table").build())
                    .clock(clock).build();
            try (Connection c = dataSource().getConnection()) {
                c.setAutoCommit(false);
                assertThatThrownBy(() -> elsewhere.execute(key("k"), c, () -> "x"))
                        .isInstanceOf(MissingTableException.class)
                        .hasMessageContaining("no_such_table")
                        .hasMessageContaining("dev/idempotency/jdbc/ddl/")
                        .hasMessageContaining("createTableIfMissing");
                c.rollback();
            }
            assertThat(executions).hasValue(0);
        }

        @Test
        void aTableNameThatIsNotAnIdentifierIsRefused() {
            for (String bad : List.of("t; DROP TABLE effect", "t--", "\"quoted\"", "a.b.c", "", "1table", "tab le")) {
                assertThatThrownBy(() -> JdbcIdempotencyStore.builder().table(bad))
                        .as(bad).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("table name");
            }
            assertThat(JdbcIdempotencyStore.builder().table("app.idem_keys").build().table().qualified()).isEqualTo("app.idem_keys");
        }

        @Test
        void aTableNameThatIsAReservedWordIsRefusedUpFrontNamingTheWord() throws Exception {
            for (String reserved : List.of("order", "user", "group", "select", "ORDER", "Table", "limit", "key", "rownum")) {
                for (String name : List.of(reserved, "app." + reserved, reserved + ".idem_keys")) {
                    assertThatThrownBy(() -> JdbcIdempotencyStore.builder().table(name))
                            .as(name).isInstanceOf(IllegalArgumentException.class)
                            .hasMessageContaining("table name '" + name + "'")
                            .hasMessageContaining("reserved word '" + reserved + "'");
                }
            }
            // What such a name would do if it got through: fail later, with a syntax error.
            try (Connection c = dataSource().getConnection(); Statement s = c.createStatement()) {
                assertThatThrownBy(() -> s.executeQuery("SELECT COUNT(*) FROM order")).isInstanceOf(SQLException.class);
            }
            for (String fine : List.of("orders", "user_keys", "app.grouped", "selection", "idempotency_record")) {
                assertThat(JdbcIdempotencyStore.builder().table(fine).build().table().qualified()).isEqualTo(fine);
            }
        }
    }

    /** A final failure, as a payment provider's decline would be. */
    static final class CardDeclined extends Exception {
        private static final long serialVersionUID = 1L;

        CardDeclined(String message) {
            super(message);
        }
    }

    record Receipt(String id, long cents) {
    }
}
