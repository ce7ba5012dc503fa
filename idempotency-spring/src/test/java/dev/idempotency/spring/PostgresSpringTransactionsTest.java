package dev.idempotency.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.RetryPolicy;
import dev.idempotency.TransactionConflictException;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.testsupport.TestDatabases;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.transaction.TransactionDefinition;

/**
 * Failures at {@code COMMIT} of a transaction run through Spring, on PostgreSQL: a serialization
 * failure is a conflict, retried whole; another failure reaches the caller typed, not retried.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresSpringTransactionsTest {

    HikariDataSource pool;
    JdbcTemplate jdbc;
    SpringTransactions serializable;
    Idempotency<Connection> engine;
    final AtomicInteger retries = new AtomicInteger();

    @BeforeAll
    void open() {
        pool = TestDatabases.postgres(8);
        jdbc = new JdbcTemplate(pool);
        jdbc.execute("drop table if exists ssi_a, ssi_b, deferred_unique");
        jdbc.execute("create table ssi_a (id varchar(64))");
        jdbc.execute("create table ssi_b (id varchar(64))");
        jdbc.execute("create table deferred_unique (id varchar(64), constraint deferred_unique_id unique (id)"
                + " deferrable initially deferred)");
        JdbcIdempotencyStore store = JdbcIdempotencyStore.ofDefaults();
        store.createTableIfMissing(pool);
        engine = Idempotency.builder(store).listener(new IdempotencyListener() {
            @Override
            public void onRetry(IdempotencyKey key, int attempt, Throwable failure, Duration backoff) {
                retries.incrementAndGet();
            }
        }).build();
        serializable = SpringTransactions.of(new JdbcTransactionManager(pool), pool)
                .withIsolation(TransactionDefinition.ISOLATION_SERIALIZABLE);
    }

    @AfterAll
    void close() {
        if (pool != null) { // null when the database was absent and the class skipped
            pool.close();
        }
    }

    /**
     * A concurrent serializable transaction that reads what the caller's wrote (ssi_b) and writes
     * what it read (ssi_a), and commits first: the caller's COMMIT then fails with 40001.
     */
    void commitCrossingWriter(String id) throws SQLException {
        try (Connection other = pool.getConnection(); Statement s = other.createStatement()) {
            other.setAutoCommit(false);
            other.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
            s.executeQuery("select count(*) from ssi_b").close();
            s.executeUpdate("insert into ssi_a values ('" + id + "')");
            other.commit();
        }
    }

    @Test
    void aSerializationFailureAtCommitIsRetriedWhole_andLeavesOneExecution() throws SQLException {
        ManagedIdempotency<Connection> managed = ManagedIdempotency.builder(engine, serializable)
                .retryPolicy(RetryPolicy.builder().maxAttempts(3).backoff(Duration.ofMillis(1), Duration.ofMillis(2)).build())
                .build();
        String id = UUID.randomUUID().toString();
        IdempotencyKey key = IdempotencyKey.of("ssi", id);
        AtomicInteger runs = new AtomicInteger();
        retries.set(0);

        Outcome<Integer> outcome = managed.execute(key, tx -> {
            int run = runs.incrementAndGet();
            try (Statement s = tx.createStatement()) {
                s.executeQuery("select count(*) from ssi_a").close();
                s.executeUpdate("insert into ssi_b values ('" + id + "')");
            }
            if (run == 1) {
                commitCrossingWriter(id);
            }
            return run;
        });

        assertThat(outcome.status()).isEqualTo(Outcome.Status.EXECUTED);
        assertThat(outcome.value()).isEqualTo(2);
        assertThat(retries).hasValue(1);
        assertThat(jdbc.queryForObject("select count(*) from ssi_b where id = ?", Integer.class, id)).isEqualTo(1);
    }

    @Test
    void aConflictAtCommitIsTypedForTheCaller_andAnyOtherCommitFailureIsNotAConflict() {
        String id = UUID.randomUUID().toString();
        jdbc.update("insert into deferred_unique values (?)", id);
        assertThatThrownBy(() -> serializable.inTransaction(tx -> {
            try (Statement s = tx.createStatement()) {
                return s.executeUpdate("insert into deferred_unique values ('" + id + "')");
            }
        })).isInstanceOf(IdempotencyStoreException.class)
                .isNotInstanceOf(TransactionConflictException.class)
                .hasMessageContaining("the commit failed");

        String other = UUID.randomUUID().toString();
        assertThatThrownBy(() -> serializable.inTransaction(tx -> {
            try (Statement s = tx.createStatement()) {
                s.executeQuery("select count(*) from ssi_a").close();
                s.executeUpdate("insert into ssi_b values ('" + other + "')");
            }
            commitCrossingWriter(other);
            return null;
        })).isInstanceOf(TransactionConflictException.class);
        assertThat(jdbc.queryForObject("select count(*) from ssi_b where id = ?", Integer.class, other)).isZero();
    }
}
