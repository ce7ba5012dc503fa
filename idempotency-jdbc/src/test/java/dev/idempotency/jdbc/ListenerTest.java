package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.BatchJob;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.KeyPolicy;
import dev.idempotency.LeasedIdempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.Phases;
import dev.idempotency.ResultCodec;
import dev.idempotency.testkit.TestClock;
import dev.idempotency.testsupport.TestDatabases;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Contract 8 (docs/contract.md) on H2: the listener reports every outcome and error, with its
 * timing; one {@code onOutcome} per outcome the caller gets, a chunk's item by item, after the
 * commit in every mode whose transaction the library runs, and when {@code execute} returns in the
 * caller's own transaction. Commits that fail are in {@code PostgresListenerTest}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ListenerTest {

    private final HikariDataSource ds = TestDatabases.h2("listener");
    private final TestClock clock = new TestClock(Instant.parse("2026-10-25T00:30:00Z"));
    private final JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().table("listener_record").build();

    @BeforeEach
    void clean() throws Exception {
        store.createTableIfMissing(ds);
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("DELETE FROM listener_record");
        }
    }

    @AfterAll
    void close() {
        ds.close();
    }

    private final HeardCalls heard = new HeardCalls(ds, "listener_record");
    private final Idempotency<Connection> heardEngine = Idempotency.builder(store).clock(clock).listener(heard).build();
    private final ManagedIdempotency<Connection> managed = ManagedIdempotency.of(heardEngine, JdbcTransactions.of(ds));
    private final LeasedIdempotency<Connection> leased = LeasedIdempotency.of(managed, store);

    private static List<String> items(String... ids) {
        return List.of(ids);
    }

    private static IdempotencyKey keyOf(String id) {
        return IdempotencyKey.of("t", id);
    }

    @BeforeEach
    void forget() {
        heard.clear();
    }

    @Test
    void inTheCallersTransactionTheOutcomeIsHeardWhenExecuteReturnsBeforeTheCallersCommit() throws Exception {
        Tx.commit(ds, c -> heardEngine.execute(keyOf("tx"), c, () -> "v"));
        Tx.commit(ds, c -> heardEngine.execute(keyOf("tx"), c, () -> "v"));
        assertThat(heard.calls()).containsExactly("tx:EXECUTED before its commit", "tx:REPLAYED");
    }

    @Test
    void managedExecuteIsHeardOnceAfterItsCommit() throws Exception {
        assertThat(managed.execute(keyOf("managed"), tx -> "v").isExecuted()).isTrue();
        assertThat(managed.execute(keyOf("managed"), tx -> "w").value()).isEqualTo("v");
        assertThat(heard.calls()).containsExactly("managed:EXECUTED", "managed:REPLAYED");
    }

    @Test
    void writeLastIsHeardOnceAfterItsCommit() throws Exception {
        assertThat(managed.writeLast(keyOf("last"), tx -> "v").isExecuted()).isTrue();
        assertThat(managed.writeLast(keyOf("last"), tx -> "w").value()).isEqualTo("v");
        assertThat(heard.calls()).containsExactly("last:EXECUTED", "last:REPLAYED");
    }

    @Test
    void leaseModeAndItsPhasesAreHeardOnceAfterTheFinishCommits() throws Exception {
        assertThat(leased.lease(IdempotentCall.of(keyOf("lease"), ResultCodec.string()), attempt -> "called").isExecuted()).isTrue();
        Phases<Connection, String, Exception> phases = Phases.<Connection, String, Exception>prepare(tx -> "prepared", ResultCodec.string())
                .call((attempt, prepared) -> prepared + "+called")
                .finish((tx, prepared, called) -> called + "+finished", ResultCodec.string());
        assertThat(leased.run(keyOf("phases"), phases).value()).isEqualTo("prepared+called+finished");
        assertThat(leased.run(keyOf("phases"), phases).isReplay()).isTrue();
        assertThat(heard.calls()).containsExactly("lease:EXECUTED", "phases:EXECUTED", "phases:REPLAYED");
    }

    @Test
    void aChunkInTheCallersTransactionIsHeardItemByItemWhenItReturns() throws Exception {
        Tx.commit(ds, c -> heardEngine.execute(keyOf("c2"), c, () -> "earlier"));
        heard.clear();
        List<Outcome<String>> outcomes = Tx.commit(ds, c -> heardEngine.executeChunk(c, items("c1", "c2", "c3"),
                item -> IdempotentCall.of(ListenerTest.keyOf(item), ResultCodec.string()), id -> "v-" + id));
        assertThat(outcomes).hasSize(3);
        assertThat(heard.calls()).containsExactly("c1:EXECUTED before its commit", "c2:REPLAYED", "c3:EXECUTED before its commit");
    }

    @Test
    void aChunkInTheCallersTransactionWhoseItemThrowsIsHeardAsOneError() {
        assertThatThrownBy(() -> Tx.commit(ds, c -> heardEngine.executeChunk(c, items("e1", "e2", "e3"),
                item -> IdempotentCall.of(ListenerTest.keyOf(item), ResultCodec.string()), id -> {
                    if (id.equals("e2")) {
                        throw new IllegalStateException("item failed");
                    }
                    return "v";
                }))).isInstanceOf(IllegalStateException.class);
        assertThat(heard.calls()).as("one error, with the chunk's first key").containsExactly("e1:error:IllegalStateException");
    }

    @Test
    void aManagedChunkIsHeardItemByItemAfterItsCommit() throws Exception {
        managed.execute(keyOf("m2"), tx -> "earlier");
        heard.clear();
        List<Outcome<String>> outcomes = managed.executeChunk(items("m1", "m2", "m3"),
                item -> IdempotentCall.of(ListenerTest.keyOf(item), ResultCodec.string()), (tx, id) -> "v-" + id);
        assertThat(outcomes).hasSize(3);
        assertThat(heard.calls()).containsExactly("m1:EXECUTED", "m2:REPLAYED", "m3:EXECUTED");
    }

    @Test
    void aBatchJobIsHeardItemByItemAfterEachChunkCommits() throws Exception {
        BatchJob<Connection, String, String, Exception> job = BatchJob.<Connection, String, String, Exception>builder(managed,
                item -> IdempotentCall.of(ListenerTest.keyOf(item), ResultCodec.string()), (tx, id) -> "v-" + id).chunkSize(2).build();
        assertThat(job.process(items("b1", "b2", "b3", "b4", "b5").iterator(), 5).progress().executed()).isEqualTo(5);
        assertThat(heard.calls()).containsExactly("b1:EXECUTED", "b2:EXECUTED", "b3:EXECUTED", "b4:EXECUTED", "b5:EXECUTED");
        heard.clear();
        job.process(items("b1", "b2", "b3").iterator(), 3);
        assertThat(heard.calls()).as("a rerun replays").containsExactly("b1:REPLAYED", "b2:REPLAYED", "b3:REPLAYED");
    }

    @Test
    void theListenerHearsEveryOutcomeAndErrorWithTiming() throws Exception {
        List<String> heard = new CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicReference<Duration> slowest = new java.util.concurrent.atomic.AtomicReference<>(Duration.ZERO);
        IdempotencyListener listener = new IdempotencyListener() {
            @Override
            public void onOutcome(IdempotencyKey key, Outcome.Status status, Duration elapsed) {
                assertThat(elapsed.isNegative()).isFalse();
                slowest.accumulateAndGet(elapsed, (a, b) -> a.compareTo(b) >= 0 ? a : b);
                heard.add(key.id() + ":" + status);
            }

            @Override
            public void onError(IdempotencyKey key, Throwable failure, Duration elapsed) {
                heard.add((key == null ? "null" : key.id()) + ":error:" + failure.getClass().getSimpleName());
            }
        };
        Idempotency<Connection> idem = Idempotency.builder(store).clock(clock).listener(listener)
                .keyPolicy(KeyPolicy.builder().finalFailures(java.io.IOException.class).lockTimeout(Duration.ofSeconds(1)).build())
                .build();
        IdempotencyKey key = IdempotencyKey.of("t", "k");
        Tx.commit(ds, c -> idem.execute(key, c, () -> "v"));
        Tx.commit(ds, c -> idem.execute(key, c, () -> "v"));
        Tx.commit(ds, c -> idem.execute(IdempotentCall.of(key, dev.idempotency.Fingerprint.of("other")), c, () -> "v"));
        Tx.commit(ds, c -> idem.execute(IdempotencyKey.of("t", "final"), c, () -> {
            throw new java.io.IOException("declined");
        }));
        assertThatThrownBy(() -> Tx.commit(ds, c -> idem.execute(IdempotencyKey.of("t", "boom"), c, () -> {
            throw new IllegalStateException("boom");
        }))).isInstanceOf(IllegalStateException.class);
        try (Connection holder = ds.getConnection()) {
            holder.setAutoCommit(false);
            idem.execute(IdempotencyKey.of("t", "held"), holder, () -> "v");
            java.util.concurrent.CompletableFuture.runAsync(() -> {
                try {
                    Tx.rollback(ds, c -> idem.execute(IdempotencyKey.of("t", "held"), c, () -> "v"));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }).get(30, java.util.concurrent.TimeUnit.SECONDS);
            holder.rollback();
        }
        assertThat(heard).containsExactly("k:EXECUTED", "k:REPLAYED", "k:MISMATCH", "final:FAILED",
                "boom:error:IllegalStateException", "held:EXECUTED", "held:IN_PROGRESS");
        assertThat(slowest.get()).as("the in-progress attempt waited about the lock timeout").isGreaterThanOrEqualTo(Duration.ofMillis(900));
    }

    @Test
    void aListenerThatThrowsIsIgnored() throws Exception {
        Idempotency<Connection> idem = Idempotency.builder(store).clock(clock).listener(new IdempotencyListener() {
            @Override
            public void onOutcome(IdempotencyKey key, Outcome.Status status, Duration elapsed) {
                throw new IllegalStateException("metrics backend down");
            }
        }).build();
        Outcome<String> o = Tx.commit(ds, c -> idem.execute(IdempotencyKey.of("t", "k2"), c, () -> "v"));
        assertThat(o.isExecuted()).isTrue();
    }
}
