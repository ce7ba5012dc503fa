package dev.idempotency.jdbc.lease;

import static dev.idempotency.jdbc.lease.AbstractLeaseModeTest.async;
import static dev.idempotency.jdbc.lease.AbstractLeaseModeTest.update;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.KeyPolicy;
import dev.idempotency.LeaseLostException;
import dev.idempotency.LeasePolicy;
import dev.idempotency.LeasedIdempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.NamedPhases;
import dev.idempotency.Outcome;
import dev.idempotency.Phases;
import dev.idempotency.RecoveringLeasedIdempotency;
import dev.idempotency.RecoveryAction;
import dev.idempotency.RecoveryGaveUpException;
import dev.idempotency.RecoveryWorker;
import dev.idempotency.ResultCodec;
import dev.idempotency.RetryPolicy;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.jdbc.JdbcTransactions;
import dev.idempotency.testsupport.LazyPool;
import dev.idempotency.testsupport.TestDatabase;
import java.io.IOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
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
 * The recovery worker (docs/contract.md, section 4.5): named operations that their client
 * abandoned are found, resumed at their recovery point once, given up after their last attempt, or
 * reported when they cannot be run; written once and run on every database by a nested class of
 * that database's test class ({@code H2Test.RecoveryWorker}, ...).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class AbstractRecoveryWorkerTest {

    static final String TABLE = "idempotency_recovery";

    private final LazyPool pool;
    private final JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().table(TABLE).build();
    private final AtomicInteger calls = new AtomicInteger();
    private final List<String> heard = Collections.synchronizedList(new ArrayList<>());

    /** @param database the database under test: a pool on it is opened when the first test needs it */
    protected AbstractRecoveryWorkerTest(TestDatabase database) {
        this.pool = database.lazyPool("recovery");
    }

    private DataSource dataSource() {
        return pool.get();
    }

    @BeforeEach
    void freshTables() throws SQLException {
        calls.set(0);
        heard.clear();
        store.createTableIfMissing(dataSource());
        try (Connection c = dataSource().getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(true);
            s.executeUpdate("DELETE FROM " + TABLE);
            s.executeUpdate("DELETE FROM " + TABLE + "_pending");
            try {
                s.executeUpdate("DELETE FROM recovery_charge");
            } catch (SQLException missing) {
                s.executeUpdate("CREATE TABLE recovery_charge (id VARCHAR(64) PRIMARY KEY, status VARCHAR(16) NOT NULL)");
            }
        }
    }

    @AfterAll
    void close() {
        pool.close();
    }

    private RecoveringLeasedIdempotency<Connection> leased(Duration lease) {
        IdempotencyListener listener = new IdempotencyListener() {
            @Override
            public void onRecovery(IdempotencyKey key, String operation, RecoveryAction action, Throwable failure) {
                heard.add(operation + ":" + action);
            }
        };
        Idempotency<Connection> engine = Idempotency.builder(store).listener(listener)
                .keyPolicy(KeyPolicy.builder().lockTimeout(Duration.ofSeconds(5)).build()).build();
        ManagedIdempotency<Connection> managed = ManagedIdempotency.builder(engine, JdbcTransactions.of(dataSource()))
                .retryPolicy(RetryPolicy.builder().backoff(Duration.ofMillis(1), Duration.ofMillis(20)).build()).build();
        return LeasedIdempotency.of(managed, store, LeasePolicy.builder().lease(lease).waitForHolder(Duration.ZERO).build());
    }

    interface Provider {
        String charge(String chargeId) throws Exception;
    }

    /** A charge in phases, named: insert pending, call the provider, mark succeeded (or declined after the worker gives up). */
    private NamedPhases<Connection, String, Exception> charge(Provider provider) {
        // tag::named[]
        return Phases.<Connection, String, Exception>prepare(tx -> {
            String id = "ch-" + UUID.randomUUID();
            update(tx, "INSERT INTO recovery_charge (id, status) VALUES (?, 'pending')", id);
            return id;
        }, ResultCodec.string())
                .call((attempt, chargeId) -> {
                    calls.incrementAndGet();
                    return provider.charge(chargeId);
                })
                .onFinalFailure((tx, chargeId, failure) -> update(tx, "UPDATE recovery_charge SET status = 'attention' WHERE id = ?",
                        chargeId))
                .finish((tx, chargeId, providerId) -> {
                    update(tx, "UPDATE recovery_charge SET status = 'succeeded' WHERE id = ?", chargeId);
                    return chargeId + "/" + providerId;
                }, ResultCodec.string())
                .named("charge");
        // end::named[]
    }

    private static IdempotencyKey key() {
        return IdempotencyKey.of("tenant-1", UUID.randomUUID().toString());
    }

    /** Leaves an operation abandoned: its client's call failed (not finally) and the client never retried. */
    private void abandon(RecoveringLeasedIdempotency<Connection> m, IdempotencyKey key) {
        IOException timeout = new IOException("provider timed out");
        assertThatThrownBy(() -> m.run(key, charge(id -> {
            throw timeout;
        }))).isSameAs(timeout);
    }

    @Test
    void anOperationWhoseClientNeverRetriesIsResumedByTheWorkerAndReplayedToTheClientThatComesBack() throws Exception {
        RecoveringLeasedIdempotency<Connection> m = leased(Duration.ofMinutes(5));
        IdempotencyKey key = key();
        abandon(m, key);
        assertThat(pendingEntries()).isEqualTo(1);
        // tag::worker[]
        RecoveryWorker<Connection> worker = RecoveryWorker.builder(m)
                .register(charge(id -> "pi_" + id))
                .build();
        RecoveryWorker.Pass pass = worker.runOnce(); // or worker.start(), a pass every interval (30 s)
        // end::worker[]
        assertThat(pass.resumed()).isEqualTo(1);
        assertThat(calls).as("the client's failed call and the worker's").hasValue(2);
        assertThat(chargeStatuses()).containsExactly("succeeded");
        assertThat(pendingEntries()).as("removed with the outcome").isZero();
        assertThat(heard).containsExactly("charge:RESUMED");
        Outcome<String> back = m.run(key, charge(id -> "never"));
        assertThat(back).isInstanceOf(Outcome.Replayed.class);
        assertThat(back.value()).endsWith("/pi_" + back.value().substring(0, back.value().indexOf('/')));
        assertThat(worker.runOnce()).isEqualTo(new RecoveryWorker.Pass(0, 0, 0, 0, 0, 0));
        assertThat(calls).hasValue(2);
    }

    @Test
    void aHungClientsEndedLeaseIsTakenOverAndItsLateResultIsFencedOut() throws Exception {
        RecoveringLeasedIdempotency<Connection> m = leased(Duration.ofSeconds(1));
        IdempotencyKey key = key();
        CountDownLatch inCall = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        CompletableFuture<Outcome<String>> hung = async(() -> m.run(key, charge(id -> {
            inCall.countDown();
            proceed.await();
            return "late";
        })));
        assertThat(inCall.await(30, TimeUnit.SECONDS)).isTrue();
        RecoveryWorker<Connection> worker = RecoveryWorker.builder(m).register(charge(id -> "worker")).build();
        assertThat(worker.runOnce().resumed()).as("the lease is live: left alone").isZero();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        int resumed = 0;
        while (resumed == 0 && System.nanoTime() < deadline) {
            Thread.sleep(100);
            resumed = worker.runOnce().resumed();
        }
        assertThat(resumed).as("resumed once the lease ended").isEqualTo(1);
        proceed.countDown();
        assertThatThrownBy(() -> hung.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(LeaseLostException.class);
        assertThat(m.run(key, charge(id -> "never")).value()).endsWith("/worker");
        assertThat(chargeStatuses()).containsExactly("succeeded");
    }

    @Test
    void aClientThatRetriesWhileTheWorkerHoldsTheKeyGetsInProgressThenTheWorkersResult() throws Exception {
        RecoveringLeasedIdempotency<Connection> m = leased(Duration.ofMinutes(5));
        IdempotencyKey key = key();
        abandon(m, key);
        CountDownLatch inCall = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        RecoveryWorker<Connection> worker = RecoveryWorker.builder(m).register(charge(id -> {
            inCall.countDown();
            proceed.await();
            return "worker";
        })).build();
        CompletableFuture<RecoveryWorker.Pass> pass = async(worker::runOnce);
        assertThat(inCall.await(30, TimeUnit.SECONDS)).isTrue();
        Outcome<String> meanwhile = m.run(key, charge(id -> "client"));
        assertThat(meanwhile).isInstanceOf(Outcome.InProgress.class);
        proceed.countDown();
        assertThat(pass.get(30, TimeUnit.SECONDS).resumed()).isEqualTo(1);
        assertThat(m.run(key, charge(id -> "client")).value()).endsWith("/worker");
        assertThat(calls).as("the client's failed call and the worker's; never the retry's").hasValue(2);
    }

    @Test
    void twoWorkersRacingForOneOperationResumeItOnce() throws Exception {
        RecoveringLeasedIdempotency<Connection> m = leased(Duration.ofMinutes(5));
        IdempotencyKey key = key();
        abandon(m, key);
        CountDownLatch bothIn = new CountDownLatch(1);
        RecoveryWorker<Connection> first = RecoveryWorker.builder(m).register(charge(id -> {
            bothIn.await(5, TimeUnit.SECONDS);
            return "first";
        })).build();
        RecoveryWorker<Connection> second = RecoveryWorker.builder(m).register(charge(id -> "second")).build();
        CompletableFuture<RecoveryWorker.Pass> a = async(first::runOnce);
        CompletableFuture<RecoveryWorker.Pass> b = async(second::runOnce);
        RecoveryWorker.Pass pb = b.get(30, TimeUnit.SECONDS);
        bothIn.countDown();
        RecoveryWorker.Pass pa = a.get(30, TimeUnit.SECONDS);
        assertThat(pa.resumed() + pb.resumed()).isEqualTo(1);
        assertThat(calls).hasValue(2);
    }

    @Test
    void anOperationThatKeepsFailingIsGivenUpAfterItsLastAttemptAndTheFailureIsReplayed() throws Exception {
        RecoveringLeasedIdempotency<Connection> m = leased(Duration.ofMinutes(5));
        IdempotencyKey key = key();
        abandon(m, key);
        RecoveryWorker<Connection> worker = RecoveryWorker.builder(m).register(charge(id -> {
            throw new IOException("provider down");
        })).maxAttempts(3).backoff(Duration.ofMillis(1)).build();
        List<RecoveryWorker.Pass> passes = new ArrayList<>();
        for (int i = 0; i < 6 && (passes.isEmpty() || passes.get(passes.size() - 1).gaveUp() == 0); i++) {
            Thread.sleep(10);
            passes.add(worker.runOnce());
        }
        assertThat(passes).extracting(RecoveryWorker.Pass::retrying).containsExactly(1, 1, 0);
        assertThat(passes.get(2).gaveUp()).isEqualTo(1);
        assertThat(calls).as("three attempts in all, the client's included").hasValue(3);
        assertThat(heard).containsExactly("charge:RETRYING", "charge:RETRYING", "charge:GAVE_UP");
        assertThat(chargeStatuses()).as("the operation's final-failure writes").containsExactly("attention");
        Outcome<String> back = m.run(key, charge(id -> "never"));
        assertThat(back).isInstanceOf(Outcome.Failed.class).matches(Outcome::isReplay);
        assertThat(((Outcome.Failed<String>) back).errorType()).isEqualTo(RecoveryGaveUpException.class.getName());
        assertThat(pendingEntries()).isZero();
    }

    @Test
    void anOperationWhoseNameIsNotRegisteredIsReportedOnceAndNeverRun() throws Exception {
        RecoveringLeasedIdempotency<Connection> m = leased(Duration.ofMinutes(5));
        IdempotencyKey key = key();
        abandon(m, key);
        NamedPhases<Connection, String, Exception> other = Phases.<Connection, String, Exception>prepare(tx -> "x", ResultCodec.string())
                .call((attempt, x) -> {
                    calls.incrementAndGet();
                    return x;
                }).result(ResultCodec.string()).named("refund");
        RecoveryWorker<Connection> worker = RecoveryWorker.builder(m).register(other).build();
        assertThat(worker.runOnce().reported()).isEqualTo(1);
        assertThat(worker.runOnce().reported()).isEqualTo(1);
        assertThat(heard).as("told once").containsExactly("charge:REPORTED");
        assertThat(calls).as("only the client's call").hasValue(1);
        assertThat(pendingEntries()).as("left for a worker that knows it").isEqualTo(1);
        assertThat(chargeStatuses()).containsExactly("pending");
    }

    @Test
    void anOperationWithoutARecoveryPointIsReportedAndNeverRun() throws Exception {
        RecoveringLeasedIdempotency<Connection> m = leased(Duration.ofMinutes(5));
        IdempotencyKey key = key();
        abandon(m, key);
        sql("UPDATE " + TABLE + " SET phase = NULL, result_codec = NULL, result = NULL");
        RecoveryWorker<Connection> worker = RecoveryWorker.builder(m).register(charge(id -> "never")).build();
        assertThat(worker.runOnce().reported()).isEqualTo(1);
        assertThat(heard).containsExactly("charge:REPORTED");
        assertThat(calls).as("only the client's call").hasValue(1);
        assertThat(attempts()).as("the take-over rolled back").isEqualTo(1);
        assertThat(chargeStatuses()).containsExactly("pending");
    }

    @Test
    void anOperationWhoseRecoveryPointTheRegisteredPhasesCannotDecodeIsReportedAndNeverRun() throws Exception {
        RecoveringLeasedIdempotency<Connection> m = leased(Duration.ofMinutes(5));
        abandon(m, key());
        NamedPhases<Connection, String, Exception> otherCodec = Phases.<Connection, Long, Exception>prepare(tx -> 1L, ResultCodec.longs())
                .call((attempt, id) -> {
                    calls.incrementAndGet();
                    return "never";
                }).result(ResultCodec.string()).named("charge");
        RecoveryWorker<Connection> worker = RecoveryWorker.builder(m).register(otherCodec).maxAttempts(2).build();
        assertThat(worker.runOnce().reported()).isEqualTo(1);
        assertThat(worker.runOnce().reported()).as("neither resumed nor given up, pass after pass").isEqualTo(1);
        assertThat(heard).containsExactly("charge:REPORTED");
        assertThat(calls).as("only the client's call").hasValue(1);
        assertThat(attempts()).isEqualTo(1);
        assertThat(chargeStatuses()).containsExactly("pending");
    }

    @Test
    void everyOperationIsFoundOnceAcrossPages() throws Exception {
        RecoveringLeasedIdempotency<Connection> m = leased(Duration.ofMinutes(5));
        for (int i = 0; i < 7; i++) {
            abandon(m, key());
        }
        RecoveryWorker<Connection> worker = RecoveryWorker.builder(m).register(charge(id -> "ok")).pageSize(3).build();
        RecoveryWorker.Pass pass = worker.runOnce();
        assertThat(pass.seen()).isEqualTo(7);
        assertThat(pass.resumed()).isEqualTo(7);
        assertThat(calls).hasValue(14);
        assertThat(chargeStatuses()).hasSize(7).containsOnly("succeeded");
    }

    @Test
    void anEntryWhoseRecordIsGoneIsRemoved() throws Exception {
        RecoveringLeasedIdempotency<Connection> m = leased(Duration.ofMinutes(5));
        abandon(m, key());
        sql("DELETE FROM " + TABLE);
        RecoveryWorker<Connection> worker = RecoveryWorker.builder(m).register(charge(id -> "ok")).build();
        assertThat(worker.runOnce().removed()).isEqualTo(1);
        assertThat(pendingEntries()).isZero();
        assertThat(calls).hasValue(1);
    }

    @Test
    void unnamedPhasesAndOtherModesWriteNoEntry() throws Exception {
        RecoveringLeasedIdempotency<Connection> m = leased(Duration.ofMinutes(5));
        IOException timeout = new IOException("provider timed out");
        Phases<Connection, String, Exception> unnamed = Phases.<Connection, String, Exception>prepare(tx -> "x", ResultCodec.string())
                .<String>call((attempt, x) -> {
                    throw timeout;
                }).result(ResultCodec.string());
        assertThatThrownBy(() -> m.run(key(), unnamed)).isSameAs(timeout);
        ManagedIdempotency.of(Idempotency.of(store), JdbcTransactions.of(dataSource())).execute(key(), tx -> "done");
        assertThat(pendingEntries()).isZero();
    }

    private void sql(String statement) throws SQLException {
        try (Connection c = dataSource().getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(true);
            s.executeUpdate(statement);
        }
    }

    private int attempts() throws SQLException {
        return count("SELECT MAX(attempts) FROM " + TABLE);
    }

    private int pendingEntries() throws SQLException {
        return count("SELECT COUNT(*) FROM " + TABLE + "_pending");
    }

    private int count(String query) throws SQLException {
        try (Connection c = dataSource().getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(query)) {
            rs.next();
            return rs.getInt(1);
        }
    }

    private List<String> chargeStatuses() throws SQLException {
        List<String> statuses = new ArrayList<>();
        try (Connection c = dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT status FROM recovery_charge")) {
            while (rs.next()) {
                statuses.add(rs.getString(1));
            }
        }
        return statuses;
    }
}
