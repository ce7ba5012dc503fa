package dev.idempotency.jdbi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Fingerprint;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.KeyPolicy;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.TransactionRequiredException;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.testkit.TestClock;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.transaction.TransactionIsolationLevel;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The Jdbi adapter's contract: the key's record lives in the handle's transaction, and Jdbi's own
 * transaction handling (commit when the callback returns, roll back when it throws) gives the
 * library's guarantee. Each database's subclass supplies a pool.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractJdbiTest {

    static final String TABLE = "jdbi_idempotency";

    /** @return a pool on the database under test */
    abstract HikariDataSource createPool();

    /** Creates {@link #TABLE} with the dialect's DDL. */
    void createTable(HikariDataSource pool, JdbcIdempotencyStore store) {
        store.createTableIfMissing(pool);
    }

    private final TestClock now = new TestClock(Instant.parse("2026-03-29T01:30:00.250Z"));
    private final AtomicInteger executions = new AtomicInteger();
    private final JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().table(TABLE).build();
    private final Idempotency<Handle> idem = JdbiIdempotency.builder(store).clock(now)
            .keyPolicy(KeyPolicy.builder().lockTimeout(Duration.ofSeconds(5)).build()).build();
    private HikariDataSource pool;
    private Jdbi jdbi;

    @BeforeAll
    void open() {
        pool = createPool();
        createTable(pool, store);
        jdbi = Jdbi.create(pool);
        jdbi.useHandle(h -> h.execute("CREATE TABLE IF NOT EXISTS jdbi_effect (k VARCHAR(400) NOT NULL)"));
    }

    @BeforeEach
    void reset() {
        jdbi.useHandle(h -> {
            h.execute("DELETE FROM jdbi_effect");
            h.execute("DELETE FROM " + TABLE);
        });
        executions.set(0);
    }

    @AfterAll
    void close() {
        if (pool != null) {
            pool.close();
        }
    }

    private String work(Handle h, IdempotencyKey key) {
        h.execute("INSERT INTO jdbi_effect (k) VALUES (?)", key.toString());
        return "receipt-" + executions.incrementAndGet();
    }

    private int effects() {
        return jdbi.withHandle(h -> h.createQuery("SELECT COUNT(*) FROM jdbi_effect").mapTo(Integer.class).one());
    }

    private static IdempotencyKey key(String id) {
        return IdempotencyKey.of("jdbi", id);
    }

    @Test
    void inTransactionCommitsAndARetryReplays() {
        IdempotencyKey key = key("commit");
        Outcome<String> first = jdbi.inTransaction(h -> idem.execute(key, h, () -> work(h, key)));
        Outcome<String> retry = jdbi.inTransaction(h -> idem.execute(key, h, () -> work(h, key)));
        assertThat(first).isEqualTo(new Outcome.Executed<>(key, "receipt-1"));
        assertThat(retry.status()).isEqualTo(Outcome.Status.REPLAYED);
        assertThat(retry.value()).isEqualTo("receipt-1");
        assertThat(effects()).isEqualTo(1);
    }

    /** Write-last mode over {@link JdbiTransactions}: the work first, the record last; a retry's work is rolled back. */
    @Test
    void writeLastThroughJdbiCommitsOnceAndARetryRollsItsWorkBackAndReplays() {
        ManagedIdempotency<Handle> managed = ManagedIdempotency.of(idem, JdbiTransactions.of(jdbi));
        IdempotencyKey key = key("write-last");
        Outcome<String> first = managed.writeLast(key, h -> work(h, key));
        Outcome<String> retry = managed.writeLast(key, h -> work(h, key));
        assertThat(first).isEqualTo(new Outcome.Executed<>(key, "receipt-1"));
        assertThat(retry.status()).isEqualTo(Outcome.Status.REPLAYED);
        assertThat(retry.value()).isEqualTo("receipt-1");
        assertThat(executions).hasValue(2);
        assertThat(effects()).isEqualTo(1);
    }

    @Test
    void aRolledBackHandleLeavesNothingAndARetryRunsAgain() {
        IdempotencyKey key = key("rollback");
        try (Handle h = jdbi.open()) {
            h.begin();
            assertThat(idem.execute(key, h, () -> work(h, key)).isExecuted()).isTrue();
            h.rollback();
        }
        Outcome<String> retry = jdbi.inTransaction(h -> idem.execute(key, h, () -> work(h, key)));
        assertThat(retry).isEqualTo(new Outcome.Executed<>(key, "receipt-2"));
        assertThat(effects()).isEqualTo(1);
    }

    @Test
    void whenTheWorkThrowsJdbiRollsBackAndTheExceptionReachesTheCallerUnchanged() {
        IdempotencyKey key = key("work-throws");
        IOException thrown = new IOException("provider timed out");
        assertThatThrownBy(() -> jdbi.useTransaction(h -> idem.execute(key, h, () -> {
            work(h, key);
            throw thrown;
        }))).isSameAs(thrown);
        Outcome<String> retry = jdbi.inTransaction(h -> idem.execute(key, h, () -> work(h, key)));
        assertThat(retry).isEqualTo(new Outcome.Executed<>(key, "receipt-2"));
        assertThat(effects()).isEqualTo(1);
    }

    @Test
    void whenTheCallbackThrowsAfterExecuteJdbiRollsBackTheRecordWithTheChange() {
        IdempotencyKey key = key("callback-throws");
        IllegalStateException later = new IllegalStateException("failed after the work");
        assertThatThrownBy(() -> jdbi.useTransaction(h -> {
            assertThat(idem.execute(key, h, () -> work(h, key)).isExecuted()).isTrue();
            throw later;
        })).isSameAs(later);
        Outcome<String> retry = jdbi.inTransaction(h -> idem.execute(key, h, () -> work(h, key)));
        assertThat(retry).isEqualTo(new Outcome.Executed<>(key, "receipt-2"));
        assertThat(effects()).isEqualTo(1);
    }

    @Test
    void anotherFingerprintIsAMismatchAndTheHandleStaysUsable() {
        IdempotencyKey key = key("mismatch");
        jdbi.useTransaction(h -> idem.execute(IdempotentCall.of(key, Fingerprint.of("amount=10")), h, () -> work(h, key)));
        Outcome<String> misuse = jdbi.inTransaction(h -> {
            Outcome<String> o = idem.execute(IdempotentCall.of(key, Fingerprint.of("amount=99")), h, () -> work(h, key));
            work(h, key("unrelated"));
            return o;
        });
        assertThat(misuse).isEqualTo(new Outcome.Mismatch<>(key));
        assertThat(effects()).isEqualTo(2);
    }

    @Test
    void aHandleOutsideATransactionOrClosedIsRefusedAndNothingIsWritten() {
        IdempotencyKey key = key("no-transaction");
        jdbi.useHandle(h -> assertThatThrownBy(() -> idem.execute(key, h, () -> work(h, key)))
                .isInstanceOf(TransactionRequiredException.class).hasMessageContaining("not inside a transaction")
                .hasMessageContaining("no-transaction"));
        Handle closed = jdbi.open();
        closed.close();
        assertThatThrownBy(() -> idem.execute(key, closed, () -> work(closed, key)))
                .isInstanceOf(TransactionRequiredException.class).hasMessageContaining("closed");
        assertThat(executions).hasValue(0);
        int records = jdbi.withHandle(h -> h.createQuery("SELECT COUNT(*) FROM " + TABLE).mapTo(Integer.class).one());
        assertThat(records).isZero();
    }

    @Test
    void aConcurrentDuplicateOnAnotherHandleWaitsThenReplaysOrRuns() throws Exception {
        for (boolean commit : new boolean[] {true, false}) {
            IdempotencyKey key = key("concurrent-" + commit);
            ExecutorService thread = Executors.newSingleThreadExecutor();
            try (Handle first = jdbi.open()) {
                first.begin();
                String firstValue = idem.execute(key, first, () -> work(first, key)).value();
                Future<Outcome<String>> second = thread.submit(() -> jdbi.inTransaction(h -> idem.execute(key, h, () -> work(h, key))));
                Thread.sleep(300);
                assertThat(second).as("waits for the first handle's transaction").isNotDone();
                if (commit) {
                    first.commit();
                } else {
                    first.rollback();
                }
                Outcome<String> outcome = second.get(10, TimeUnit.SECONDS);
                assertThat(outcome.status()).isEqualTo(commit ? Outcome.Status.REPLAYED : Outcome.Status.EXECUTED);
                assertThat(outcome.value()).isEqualTo(commit ? firstValue : "receipt-" + executions.get());
            } finally {
                thread.shutdownNow();
            }
        }
        assertThat(effects()).isEqualTo(2);
    }

    @Test
    void aSerializableTransactionReplaysToo() {
        IdempotencyKey key = key("serializable");
        jdbi.useTransaction(TransactionIsolationLevel.SERIALIZABLE, h -> idem.execute(key, h, () -> work(h, key)));
        Outcome<String> retry = jdbi.inTransaction(TransactionIsolationLevel.SERIALIZABLE, h -> idem.execute(key, h, () -> work(h, key)));
        assertThat(retry.status()).isEqualTo(Outcome.Status.REPLAYED);
        assertThat(executions).hasValue(1);
    }

    @Test
    void expiredRecordsArePurgedThroughAHandle() {
        jdbi.useTransaction(h -> idem.execute(key("old"), h, () -> work(h, key("old"))));
        now.advance(KeyPolicy.DEFAULT_RETENTION);
        jdbi.useHandle(h -> assertThatThrownBy(() -> idem.purgeExpired(h, 10)).isInstanceOf(TransactionRequiredException.class)
                .hasMessageContaining("not inside a transaction"));
        int purged = jdbi.inTransaction(h -> idem.purgeExpired(h, 10));
        assertThat(purged).isEqualTo(1);
    }

    /**
     * A handle inside a transaction on a read-only connection passes Jdbi's own check; the JDBC store's
     * check refuses it before anything is written. Where the driver takes {@code setReadOnly} as a hint
     * it does not report, there is nothing to refuse.
     */
    @Test
    void aHandleOnAReadOnlyConnectionIsRefusedAndNothingIsWritten() throws Exception {
        IdempotencyKey key = key("read-only");
        try (Handle h = jdbi.open()) {
            h.getConnection().setReadOnly(true);
            try {
                Assumptions.assumeTrue(h.getConnection().isReadOnly(), "the driver does not report setReadOnly(true)");
                h.begin();
                assertThatThrownBy(() -> idem.execute(key, h, () -> work(h, key))).isInstanceOf(TransactionRequiredException.class)
                        .hasMessageContaining("read-only").hasMessageContaining("Nothing was written");
                h.rollback();
            } finally {
                h.getConnection().setReadOnly(false);
            }
        }
        assertThat(executions).hasValue(0);
    }

    /** Jdbi wraps the driver's failures: a conflict stays retryable through the wrapping, anything else does not. */
    @Test
    void jdbiTransactionsRetryConflictsOnly() {
        JdbiTransactions transactions = JdbiTransactions.of(jdbi);
        java.sql.SQLException conflict = new java.sql.SQLException("could not serialize access", "40001");
        assertThat(transactions.isRetryable(new org.jdbi.v3.core.statement.UnableToExecuteStatementException(conflict, null))).isTrue();
        java.sql.SQLException duplicate = new java.sql.SQLException("duplicate key", "23505");
        assertThat(transactions.isRetryable(new org.jdbi.v3.core.statement.UnableToExecuteStatementException(duplicate, null))).isFalse();
        assertThat(transactions.isRetryable(new IllegalStateException("a bug"))).isFalse();
    }
}
