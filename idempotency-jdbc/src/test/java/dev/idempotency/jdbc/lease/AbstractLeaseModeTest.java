package dev.idempotency.jdbc.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Idempotency;
import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.KeyPolicy;
import dev.idempotency.LeaseAttempt;
import dev.idempotency.LeaseLostException;
import dev.idempotency.LeasePolicy;
import dev.idempotency.LeasedIdempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.Phases;
import dev.idempotency.ResultCodec;
import dev.idempotency.ResultCodecException;
import dev.idempotency.ResultTooLargeException;
import dev.idempotency.RetryPolicy;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.jdbc.JdbcTransactions;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.LeasedCompletion;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.testsupport.LazyPool;
import dev.idempotency.testsupport.TestDatabase;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransactionRollbackException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Lease mode, recovery phases and transactions run for the caller (docs/contract.md, section 4, and
 * the retries of section 3.6), end to end through {@link LeasedIdempotency} on a real database,
 * written once and run on every database by a nested class of that database's test class
 * ({@code H2Test.LeaseMode}, ...).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class AbstractLeaseModeTest {

    static final String TABLE = "idempotency_lease";

    private final LazyPool pool;

    /** @param database the database under test: a pool on it is opened when the first test needs it */
    protected AbstractLeaseModeTest(TestDatabase database) {
        this.pool = database.lazyPool("lease");
    }

    /** @return the pool on the database under test */
    protected DataSource dataSource() {
        return pool.get();
    }

    /** Thrown by the fake provider for a declined card: declared final. */
    static final class Declined extends Exception {
        private static final long serialVersionUID = 1L;

        Declined(String message) {
            super(message);
        }
    }

    protected final JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().table(TABLE).build();
    protected final AtomicInteger calls = new AtomicInteger();
    protected final AtomicInteger prepares = new AtomicInteger();

    @BeforeEach
    void freshTables() throws SQLException {
        calls.set(0);
        prepares.set(0);
        store.createTableIfMissing(dataSource());
        try (Connection c = dataSource().getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(true);
            s.executeUpdate("DELETE FROM " + TABLE);
            try {
                s.executeUpdate("DELETE FROM lease_charge");
            } catch (SQLException missing) {
                if (!c.getAutoCommit()) {
                    c.rollback();
                }
                s.executeUpdate("CREATE TABLE lease_charge (id VARCHAR(64) PRIMARY KEY, status VARCHAR(16) NOT NULL,"
                        + " provider_id VARCHAR(128))");
            }
        }
    }

    @AfterAll
    void close() {
        pool.close();
    }

    /**
     * The clock rule on one table: lease mode times its records by the database's clock, so a
     * transactional claim and the purge judge a record that lease mode wrote by that clock too,
     * whatever the engine's. An engine an hour ahead of the database neither takes such a record over
     * nor purges it before it has expired; one an hour behind takes over and purges it once it has.
     */
    @Test
    void aRecordLeaseModeWroteIsJudgedByTheDatabasesClockWhateverTheEngines() throws Exception {
        IdempotencyKey kept = IdempotencyKey.of("clock", "kept");
        IdempotencyKey gone = IdempotencyKey.of("clock", "gone");
        Fingerprint fingerprint = Fingerprint.of("request");
        Instant databaseNow = completeLeased(kept, fingerprint, Duration.ofMinutes(10));
        completeLeased(gone, fingerprint, Duration.ofMillis(1));
        Thread.sleep(50); // "gone" has expired by the database's clock
        Instant ahead = databaseNow.plus(Duration.ofHours(1));
        try (Connection c = dataSource().getConnection()) {
            c.setAutoCommit(false);
            assertThat(store.claim(c, new ClaimRequest(kept, fingerprint, ahead, ahead.plus(Duration.ofDays(1)), Duration.ofSeconds(1))))
                    .as("an engine an hour ahead replays the record, unexpired by the database's clock")
                    .isInstanceOf(Claim.Existing.class);
            assertThat(store.purgeExpired(c, ahead, 100)).as("and its purge deletes only what expired by that clock").isEqualTo(1);
            c.rollback();
        }
        Instant behind = databaseNow.minus(Duration.ofHours(1));
        try (Connection c = dataSource().getConnection()) {
            c.setAutoCommit(false);
            assertThat(store.claim(c, new ClaimRequest(gone, fingerprint, behind, behind.plus(Duration.ofDays(1)), Duration.ofSeconds(1))))
                    .as("an engine an hour behind takes over the record expired by the database's clock")
                    .isInstanceOf(Claim.Acquired.class);
            c.rollback();
        }
        try (Connection c = dataSource().getConnection()) {
            c.setAutoCommit(false);
            assertThat(store.purgeExpired(c, behind, 100)).as("an engine an hour behind purges it too").isEqualTo(1);
            c.rollback();
        }
    }

    /** Completes {@code key} through lease mode's primitives, expiring {@code retention} later; returns the database's now. */
    private Instant completeLeased(IdempotencyKey key, Fingerprint fingerprint, Duration retention) throws SQLException {
        try (Connection c = dataSource().getConnection()) {
            c.setAutoCommit(false);
            LeaseClaim claim = store.claimLease(c, new LeaseRequest(key, fingerprint, "owner", Duration.ofSeconds(30), retention,
                    Duration.ofSeconds(1)));
            assertThat(claim).isInstanceOf(LeaseClaim.Acquired.class);
            assertThat(store.completeLeased(c, "owner", new LeasedCompletion(key, RecordStatus.COMPLETED, "string",
                    "done".getBytes(java.nio.charset.StandardCharsets.UTF_8), retention))).isPresent();
            c.commit();
            return ((LeaseClaim.Acquired) claim).now();
        }
    }

    ManagedIdempotency<Connection> managed(InstantSource clock, IdempotencyListener listener) {
        // tag::managed[]
        Idempotency<Connection> engine = Idempotency.builder(store).clock(clock).listener(listener)
                .keyPolicy(KeyPolicy.builder().finalFailures(Declined.class).lockTimeout(Duration.ofSeconds(5)).build()).build();
        ManagedIdempotency<Connection> managed = ManagedIdempotency.builder(engine, JdbcTransactions.of(dataSource()))
                .retryPolicy(RetryPolicy.builder().backoff(Duration.ofMillis(1), Duration.ofMillis(20)).build()).build();
        // end::managed[]
        return managed;
    }

    LeasedIdempotency<Connection> leased(InstantSource clock, LeasePolicy leases, IdempotencyListener listener) {
        // tag::leased[]
        LeasedIdempotency<Connection> leased = LeasedIdempotency.of(managed(clock, listener), store, leases);
        // end::leased[]
        return leased;
    }

    LeasedIdempotency<Connection> leased(LeasePolicy leases) {
        return leased(Clock.systemUTC(), leases, IdempotencyListener.NONE);
    }

    static IdempotencyKey key() {
        return IdempotencyKey.of("tenant-1", UUID.randomUUID().toString());
    }

    /** The charge operation of the docs: insert pending, call the provider, mark succeeded (or declined). */
    Phases<Connection, String, Exception> charge(CallBody provider) {
        // tag::phases[]
        return Phases.<Connection, String, Exception>prepare(tx -> {
            prepares.incrementAndGet();
            String id = "ch-" + UUID.randomUUID();
            update(tx, "INSERT INTO lease_charge (id, status) VALUES (?, 'pending')", id);
            return id;
        }, ResultCodec.string())
                .call((attempt, chargeId) -> {
                    calls.incrementAndGet();
                    return provider.call(attempt, chargeId);
                })
                .onFinalFailure((tx, chargeId, failure) -> update(tx, "UPDATE lease_charge SET status = 'declined' WHERE id = ?", chargeId))
                .finish((tx, chargeId, providerId) -> {
                    update(tx, "UPDATE lease_charge SET status = 'succeeded', provider_id = '" + providerId + "' WHERE id = ?", chargeId);
                    return chargeId + "/" + providerId;
                }, ResultCodec.string());
        // end::phases[]
    }

    interface CallBody {
        String call(LeaseAttempt attempt, String chargeId) throws Exception;
    }

    @Test
    void aLeasedCallRunsOnceAndEveryRetryReplays() throws Exception {
        LeasedIdempotency<Connection> m = leased(LeasePolicy.ofDefaults());
        IdempotencyKey key = key();
        List<Integer> numbers = new ArrayList<>();
        Outcome<String> first = m.lease(IdempotentCall.of(key, ResultCodec.string()), attempt -> {
            calls.incrementAndGet();
            numbers.add(attempt.number());
            return "paid:" + attempt.downstreamKey().id();
        });
        Outcome<String> retry = m.lease(IdempotentCall.of(key, ResultCodec.string()), attempt -> {
            calls.incrementAndGet();
            return "again";
        });
        assertThat(first).isInstanceOf(Outcome.Executed.class);
        assertThat(retry).isInstanceOf(Outcome.Replayed.class);
        assertThat(retry.value()).isEqualTo(first.value()).isEqualTo("paid:" + key.derive("downstream").id());
        assertThat(calls).hasValue(1);
        assertThat(numbers).containsExactly(1);
    }

    @Test
    void aConcurrentAttemptOnALiveLeaseGetsInProgressWithTheLeaseEndAndReplaysOnceDone() throws Exception {
        LeasedIdempotency<Connection> m = leased(LeasePolicy.builder().lease(Duration.ofMinutes(1)).build());
        IdempotencyKey key = key();
        CountDownLatch inCall = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        CompletableFuture<Outcome<String>> holder = async(() -> m.lease(IdempotentCall.of(key, ResultCodec.string()), attempt -> {
            inCall.countDown();
            proceed.await();
            return "first";
        }));
        assertThat(inCall.await(30, TimeUnit.SECONDS)).isTrue();
        Outcome<String> duplicate = m.lease(IdempotentCall.of(key, ResultCodec.string()), attempt -> "second");
        assertThat(duplicate).isInstanceOf(Outcome.InProgress.class);
        Instant leaseUntil = ((Outcome.InProgress<String>) duplicate).leaseUntil();
        assertThat(leaseUntil).isAfter(Instant.now().plusSeconds(30));
        assertThat(((Outcome.InProgress<String>) duplicate).leaseRemaining()).as("by the database's clock")
                .isBetween(Duration.ofSeconds(30), Duration.ofMinutes(1));
        proceed.countDown();
        assertThat(holder.get(30, TimeUnit.SECONDS).value()).isEqualTo("first");
        assertThat(m.lease(IdempotentCall.of(key, ResultCodec.string()), attempt -> "third")).isInstanceOf(Outcome.Replayed.class)
                .extracting(Outcome::value).isEqualTo("first");
    }

    @Test
    void nodesWhoseClocksDifferByMoreThanTheLeaseStillAgreeOnIt() throws Exception {
        LeasePolicy fiveSeconds = LeasePolicy.builder().lease(Duration.ofSeconds(5)).build();
        LeasedIdempotency<Connection> behind = leased(Clock.offset(Clock.systemUTC(), Duration.ofMinutes(-10)), fiveSeconds,
                IdempotencyListener.NONE);
        LeasedIdempotency<Connection> ahead = leased(Clock.offset(Clock.systemUTC(), Duration.ofMinutes(10)), fiveSeconds,
                IdempotencyListener.NONE);
        IdempotencyKey key = key();
        CountDownLatch inCall = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        CompletableFuture<Outcome<String>> holder = async(() -> behind.lease(IdempotentCall.of(key, ResultCodec.string()), a -> {
            inCall.countDown();
            proceed.await();
            return "behind";
        }));
        assertThat(inCall.await(30, TimeUnit.SECONDS)).isTrue();
        Outcome<String> fromAhead = ahead.lease(IdempotentCall.of(key, ResultCodec.string()), a -> "ahead");
        assertThat(fromAhead).as("a node whose clock runs 20 minutes ahead must not take over a live 5-second lease")
                .isInstanceOf(Outcome.InProgress.class);
        proceed.countDown();
        assertThat(holder.get(30, TimeUnit.SECONDS)).isInstanceOf(Outcome.Executed.class);
        assertThat(ahead.lease(IdempotentCall.of(key, ResultCodec.string()), a -> "ahead").value()).isEqualTo("behind");
    }

    @Test
    void aCallThatFailsEndsTheLeaseAtOnceAndTheRetryRunsAsTheNextAttempt() throws Exception {
        LeasedIdempotency<Connection> m = leased(LeasePolicy.builder().lease(Duration.ofMinutes(10)).build());
        IdempotencyKey key = key();
        IOException timeout = new IOException("provider timed out");
        assertThatThrownBy(() -> m.run(key, charge((attempt, id) -> {
            throw timeout;
        }))).isSameAs(timeout);
        List<Integer> numbers = new ArrayList<>();
        Outcome<String> retry = m.run(key, charge((attempt, id) -> {
            numbers.add(attempt.number());
            assertThat(attempt.resumed()).isTrue();
            return "pi_1";
        }));
        assertThat(retry).isInstanceOf(Outcome.Executed.class);
        assertThat(numbers).containsExactly(2);
        assertThat(prepares).as("the committed prepare is not repeated").hasValue(1);
        assertThat(chargeStatuses()).containsExactly("succeeded");
    }

    @Test
    void aFinalFailureOfTheCallIsRecordedWithItsFinishingWritesAndReplayed() throws Exception {
        LeasedIdempotency<Connection> m = leased(LeasePolicy.ofDefaults());
        IdempotencyKey key = key();
        Outcome<String> declined = m.run(key, charge((attempt, id) -> {
            throw new Declined("card declined");
        }));
        Outcome<String> retry = m.run(key, charge((attempt, id) -> "never"));
        assertThat(declined).isInstanceOf(Outcome.Failed.class);
        assertThat(retry).isInstanceOf(Outcome.Failed.class).matches(Outcome::isReplay);
        assertThat(((Outcome.Failed<String>) retry).errorMessage()).isEqualTo("card declined");
        assertThat(calls).hasValue(1);
        assertThat(chargeStatuses()).containsExactly("declined");
    }

    /** Lease mode on an engine whose key policy records results of at most {@code maxResultBytes}. */
    LeasedIdempotency<Connection> limitedTo(int maxResultBytes) {
        Idempotency<Connection> engine = Idempotency.builder(store)
                .keyPolicy(KeyPolicy.builder().finalFailures(Declined.class).maxResultBytes(maxResultBytes).build()).build();
        return LeasedIdempotency.of(ManagedIdempotency.of(engine, JdbcTransactions.of(dataSource())), store);
    }

    @Test
    void aFinishResultOverTheLimitIsRecordedAsAFailureAndTheCallIsNeverRepeated() throws Exception {
        LeasedIdempotency<Connection> m = limitedTo(64);
        IdempotencyKey key = key();
        String tooLong = "pi_" + "x".repeat(64);
        assertThatThrownBy(() -> m.run(key, charge((attempt, id) -> tooLong)))
                .isInstanceOfSatisfying(ResultTooLargeException.class, e -> assertThat(e.getMessage())
                        .contains("the finish phase's writes were rolled back", "recorded as failed", "not run again")
                        .doesNotContain("roll back the transaction"));
        Outcome<String> retry = m.run(key, charge((attempt, id) -> "pi_retry"));
        assertThat(retry).isInstanceOf(Outcome.Failed.class).matches(Outcome::isReplay);
        assertThat(((Outcome.Failed<String>) retry).errorType()).isEqualTo(ResultTooLargeException.class.getName());
        assertThat(calls).as("the retry did not call the provider again").hasValue(1);
        assertThat(chargeStatuses()).as("the finish's writes were rolled back, the prepare's kept").containsExactly("pending");
        assertThat(providerIds()).isEmpty();
    }

    @Test
    void aFinishResultItsCodecCannotEncodeIsRecordedAsAFailureAndTheCallIsNeverRepeated() throws Exception {
        LeasedIdempotency<Connection> m = limitedTo(KeyPolicy.DEFAULT_MAX_RESULT_BYTES);
        IdempotencyKey key = key();
        ResultCodec<String> broken = ResultCodec.of("receipt-v1", value -> {
            throw new IllegalStateException("the encoder cannot write " + value);
        }, text -> text);
        IdempotentCall<String> call = IdempotentCall.of(key, broken);
        assertThatThrownBy(() -> m.lease(call, attempt -> {
            calls.incrementAndGet();
            return "pi_1";
        })).isInstanceOfSatisfying(ResultCodecException.class, e -> assertThat(e.getMessage())
                .contains("failed to encode", "recorded as failed", "not run again")
                .doesNotContain("roll back the transaction"));
        Outcome<String> retry = m.lease(call, attempt -> {
            calls.incrementAndGet();
            return "pi_2";
        });
        assertThat(retry).isInstanceOf(Outcome.Failed.class).matches(Outcome::isReplay);
        assertThat(((Outcome.Failed<String>) retry).errorType()).isEqualTo(ResultCodecException.class.getName());
        assertThat(calls).as("the retry did not call the provider again").hasValue(1);
    }

    @Test
    void aPrepareValueOverTheLimitRollsTheClaimBackAndTheCallDoesNotRun() throws Exception {
        LeasedIdempotency<Connection> m = limitedTo(8);
        IdempotencyKey key = key();
        Phases<Connection, String, Exception> phases = Phases.<Connection, String, Exception>prepare(tx -> {
            update(tx, "INSERT INTO lease_charge (id, status) VALUES (?, 'pending')", "ch-large");
            return "a prepare value over eight bytes";
        }, ResultCodec.string()).call((attempt, prepared) -> {
            calls.incrementAndGet();
            return "pi";
        }).result(ResultCodec.string());
        assertThatThrownBy(() -> m.run(key, phases)).isInstanceOfSatisfying(ResultTooLargeException.class, e -> assertThat(e.getMessage())
                .contains("the prepare phase's value", "the claim's transaction was rolled back", "the call did not run")
                .doesNotContain("roll back the transaction"));
        assertThat(calls).hasValue(0);
        assertThat(chargeStatuses()).as("the prepare's writes were rolled back with the claim").isEmpty();
        try (Connection c = dataSource().getConnection();
             PreparedStatement s = c.prepareStatement("SELECT COUNT(*) FROM " + TABLE + " WHERE key_id = ?")) {
            s.setString(1, key.id());
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                assertThat(rs.getInt(1)).as("nothing of the key was recorded").isZero();
            }
        }
    }

    @Test
    void anAttemptThatStalledPastItsLeaseIsTakenOverResumedAndFencedOut() throws Exception {
        LeasedIdempotency<Connection> shortLease = leased(LeasePolicy.builder().lease(Duration.ofMillis(300)).build());
        LeasedIdempotency<Connection> m = leased(LeasePolicy.builder().lease(Duration.ofMinutes(1)).build());
        IdempotencyKey key = key();
        CountDownLatch inCall = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        CompletableFuture<Outcome<String>> stale = async(() -> shortLease.run(key, charge((attempt, id) -> {
            inCall.countDown();
            proceed.await();
            return "pi_stale";
        })));
        assertThat(inCall.await(30, TimeUnit.SECONDS)).isTrue();
        Thread.sleep(400); // the stale attempt's lease ends (by the database's clock)
        List<String> handedOver = new ArrayList<>();
        CountDownLatch newInCall = new CountDownLatch(1);
        CountDownLatch newProceed = new CountDownLatch(1);
        CompletableFuture<Outcome<String>> takeOver = async(() -> m.run(key, charge((attempt, id) -> {
            assertThat(attempt.number()).isEqualTo(2);
            assertThat(attempt.resumed()).isTrue();
            handedOver.add(id);
            newInCall.countDown();
            newProceed.await();
            return "pi_new";
        })));
        assertThat(newInCall.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(prepares).as("the committed prepare is not repeated").hasValue(1);
        proceed.countDown(); // the stale owner finishes while the new owner holds the key
        assertThatThrownBy(() -> stale.join()).hasCauseInstanceOf(LeaseLostException.class);
        assertThat(providerIds()).as("the stale owner's finishing writes were rolled back").isEmpty();
        newProceed.countDown();
        Outcome<String> done = takeOver.get(30, TimeUnit.SECONDS);
        assertThat(done).isInstanceOf(Outcome.Executed.class);
        assertThat(done.value()).isEqualTo(handedOver.get(0) + "/pi_new");
        assertThat(m.run(key, charge((attempt, id) -> "never")).value()).isEqualTo(done.value());
        assertThat(providerIds()).containsExactly("pi_new");
    }

    @Test
    void aLongCallExtendsItsLeaseAndKeepsTheKey() throws Exception {
        LeasedIdempotency<Connection> m = leased(LeasePolicy.builder().lease(Duration.ofMillis(300)).build());
        IdempotencyKey key = key();
        Outcome<String> outcome = m.lease(IdempotentCall.of(key, ResultCodec.string()), attempt -> {
            Instant before = attempt.leaseUntil();
            Instant extended = attempt.extend(Duration.ofMinutes(1));
            assertThat(extended).isAfter(before);
            Thread.sleep(400); // past the first lease, within the extended one
            assertThat(m.lease(IdempotentCall.of(key, ResultCodec.string()), other -> "duplicate")).isInstanceOf(Outcome.InProgress.class);
            return "done";
        });
        assertThat(outcome.value()).isEqualTo("done");
    }

    @Test
    void aDuplicateThatWaitsForTheHolderReplaysItsResult() throws Exception {
        LeasedIdempotency<Connection> holderSide = leased(LeasePolicy.ofDefaults());
        LeasedIdempotency<Connection> waiting = leased(LeasePolicy.builder().waitForHolder(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(20)).build());
        IdempotencyKey key = key();
        CountDownLatch inCall = new CountDownLatch(1);
        CompletableFuture<Outcome<String>> holder = async(() -> holderSide.lease(IdempotentCall.of(key, ResultCodec.string()), a -> {
            inCall.countDown();
            Thread.sleep(200);
            return "first";
        }));
        assertThat(inCall.await(30, TimeUnit.SECONDS)).isTrue();
        Outcome<String> waited = waiting.lease(IdempotentCall.of(key, ResultCodec.string()), a -> "second");
        assertThat(waited).isInstanceOf(Outcome.Replayed.class).extracting(Outcome::value).isEqualTo("first");
        assertThat(holder.get(30, TimeUnit.SECONDS)).isInstanceOf(Outcome.Executed.class);
    }

    @Test
    void aTransactionRunForTheCallerIsRetriedWholeOnAConflictAndTheListenerHearsIt() throws Exception {
        List<Integer> retried = new ArrayList<>();
        ManagedIdempotency<Connection> m = managed(Clock.systemUTC(), new IdempotencyListener() {
            @Override
            public void onRetry(IdempotencyKey key, int attempt, Throwable failure, Duration backoff) {
                retried.add(attempt);
            }
        });
        IdempotencyKey key = key();
        AtomicInteger runs = new AtomicInteger();
        Outcome<String> outcome = m.execute(key, tx -> {
            update(tx, "INSERT INTO lease_charge (id, status) VALUES (?, 'pending')", "run-" + runs.incrementAndGet());
            if (runs.get() < 3) {
                throw new SQLTransactionRollbackException("could not serialize access", "40001");
            }
            return "ok";
        });
        assertThat(outcome).isInstanceOf(Outcome.Executed.class);
        assertThat(retried).containsExactly(1, 2);
        assertThat(chargeStatuses()).as("the aborted attempts left nothing").hasSize(1);
        assertThat(m.execute(key, tx -> "again").value()).isEqualTo("ok");
        IllegalStateException bug = new IllegalStateException("not a conflict");
        assertThatThrownBy(() -> m.execute(key(), tx -> {
            throw bug;
        })).isSameAs(bug);
        assertThat(retried).containsExactly(1, 2);
    }

    static <T> CompletableFuture<T> async(java.util.concurrent.Callable<T> task) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return task.call();
            } catch (Exception e) {
                throw new java.util.concurrent.CompletionException(e);
            }
        });
    }

    /**
     * Two attempts take over the same ended lease at once. The first holds its take-over open while
     * the second reads the ended lease and tries its own compare-and-set on the owner token, which
     * waits for the first and then finds the row changed. Exactly one owns the lease: the second is
     * told it is held (or, where its snapshot keeps showing the ended lease, gets a retryable
     * conflict), never that it acquired it.
     */
    @Test
    void twoTakeOversOfOneEndedLeaseHaveOneWinner() throws Exception {
        IdempotencyKey key = key();
        dev.idempotency.Fingerprint none = dev.idempotency.Fingerprint.NONE;
        try (Connection c = dataSource().getConnection()) {
            c.setAutoCommit(false);
            assertThat(store.claimLease(c, new dev.idempotency.spi.LeaseRequest(key, none, "owner-0", Duration.ofMillis(20),
                    Duration.ofHours(1), Duration.ofSeconds(5)))).isInstanceOf(dev.idempotency.spi.LeaseClaim.Acquired.class);
            c.commit();
        }
        Thread.sleep(200); // the 20 ms lease has ended by the database's clock
        try (Connection first = dataSource().getConnection(); Connection second = dataSource().getConnection()) {
            first.setAutoCommit(false);
            second.setAutoCommit(false);
            assertThat(store.claimLease(first, new dev.idempotency.spi.LeaseRequest(key, none, "owner-1", Duration.ofMinutes(1),
                    Duration.ofHours(1), Duration.ofSeconds(5)))).isInstanceOf(dev.idempotency.spi.LeaseClaim.Acquired.class);
            CompletableFuture<Object> late = CompletableFuture.supplyAsync(() -> {
                try {
                    return store.claimLease(second, new dev.idempotency.spi.LeaseRequest(key, none, "owner-2", Duration.ofMinutes(1),
                            Duration.ofHours(1), Duration.ofSeconds(5)));
                } catch (RuntimeException e) {
                    return e;
                }
            });
            Thread.sleep(300); // let the second read the ended lease and wait for the first's row
            first.commit();
            Object answer = late.get(20, TimeUnit.SECONDS);
            second.rollback();
            assertThat(answer).as("the second take-over of the same ended lease").satisfiesAnyOf(
                    a -> assertThat(a).isInstanceOf(dev.idempotency.spi.LeaseClaim.Held.class),
                    a -> assertThat(a).isInstanceOf(dev.idempotency.TransactionConflictException.class));
        }
    }

    static void update(Connection c, String sql, String parameter) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(sql)) {
            s.setString(1, parameter);
            s.executeUpdate();
        }
    }

    List<String> chargeStatuses() throws SQLException {
        return column("status");
    }

    List<String> providerIds() throws SQLException {
        return column("provider_id");
    }

    private List<String> column(String name) throws SQLException {
        List<String> values = new ArrayList<>();
        try (Connection c = dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT " + name + " FROM lease_charge WHERE " + name + " IS NOT NULL")) {
            while (rs.next()) {
                values.add(rs.getString(1));
            }
        }
        return values;
    }
}
