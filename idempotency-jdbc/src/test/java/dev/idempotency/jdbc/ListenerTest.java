package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.KeyPolicy;
import dev.idempotency.Outcome;
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
 * timing.
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
        Tx.commit(ds, c -> idem.execute(key, dev.idempotency.Fingerprint.of("other"), c, () -> "v"));
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
