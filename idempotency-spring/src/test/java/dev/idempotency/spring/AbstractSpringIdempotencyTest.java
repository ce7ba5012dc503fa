package dev.idempotency.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.Outcome;
import dev.idempotency.ResultCodec;
import dev.idempotency.TransactionRequiredException;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The record of {@link SpringIdempotency} commits and rolls back with the rest of a Spring-managed
 * transaction. Each subclass names a database and a transaction manager, and how the work writes its
 * business row: through {@code JdbcTemplate}, or as a JPA entity that Hibernate flushes at commit.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractSpringIdempotencyTest {

    HikariDataSource pool;
    JdbcTemplate jdbc;
    PlatformTransactionManager transactionManager;
    TransactionTemplate transactions;
    SpringIdempotency idempotency;
    String scope;

    /** @return a pool on the database under test */
    abstract HikariDataSource createPool();

    /** @return the transaction manager under test, on {@link #pool} */
    abstract PlatformTransactionManager createTransactionManager();

    /** Writes the business row, inside the current Spring transaction. */
    abstract void writePayment(String id, long cents);

    /** Closes what {@link #createTransactionManager} opened. */
    void closeTransactionManager() {
    }

    @BeforeAll
    void open() {
        pool = createPool();
        jdbc = new JdbcTemplate(pool);
        jdbc.execute("drop table if exists spring_payment");
        jdbc.execute("create table spring_payment (id varchar(64) primary key, cents bigint not null)");
        JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().table("spring_idempotency_record").build();
        try (var c = pool.getConnection()) {
            c.createStatement().execute("drop table if exists spring_idempotency_record");
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
        store.createTableIfMissing(pool);
        transactionManager = createTransactionManager();
        transactions = new TransactionTemplate(transactionManager);
        idempotency = SpringIdempotency.of(Idempotency.builder(store).build(), pool);
    }

    @AfterAll
    void close() {
        if (pool == null) {
            return; // the database was absent: the class was skipped before anything opened
        }
        closeTransactionManager();
        pool.close();
    }

    @BeforeEach
    void newScope() {
        scope = "t-" + UUID.randomUUID().toString().substring(0, 8);
    }

    int payments(String id) {
        return jdbc.queryForObject("select count(*) from spring_payment where id = ?", Integer.class, id);
    }

    int records(IdempotencyKey key) {
        return jdbc.queryForObject("select count(*) from spring_idempotency_record where scope = ? and key_id = ?",
                Integer.class, key.scope(), key.id());
    }

    Outcome<String> pay(IdempotencyKey key, String paymentId, AtomicInteger runs) {
        // tag::transaction-template[]
        Outcome<String> outcome = transactions.execute(status -> idempotency.execute(key, () -> {
            runs.incrementAndGet();
            writePayment(paymentId, 1250);
            return "paid " + paymentId;
        }));
        // end::transaction-template[]
        return outcome;
    }

    @Test
    void theRecordAndTheWorkCommitTogether_andTheSameKeyReplays() {
        IdempotencyKey key = IdempotencyKey.of(scope, "k-1");
        AtomicInteger runs = new AtomicInteger();

        Outcome<String> first = pay(key, scope + "-p1", runs);
        Outcome<String> retry = pay(key, scope + "-p2", runs);

        assertThat(first.status()).isEqualTo(Outcome.Status.EXECUTED);
        assertThat(retry.status()).isEqualTo(Outcome.Status.REPLAYED);
        assertThat(retry.value()).isEqualTo("paid " + scope + "-p1");
        assertThat(runs).hasValue(1);
        assertThat(payments(scope + "-p1")).isEqualTo(1);
        assertThat(payments(scope + "-p2")).isZero();
        assertThat(records(key)).isEqualTo(1);
    }

    @Test
    void aRollbackLeavesNeitherTheRecordNorTheWork_andTheRetryRunsTheWorkAgain() {
        IdempotencyKey key = IdempotencyKey.of(scope, "k-2");
        AtomicInteger runs = new AtomicInteger();

        assertThatThrownBy(() -> transactions.execute(status -> {
            idempotency.execute(key, () -> {
                runs.incrementAndGet();
                writePayment(scope + "-p1", 1250);
                return "paid";
            });
            throw new IllegalStateException("the caller fails after execute returned");
        })).isInstanceOf(IllegalStateException.class);

        assertThat(payments(scope + "-p1")).isZero();
        assertThat(records(key)).isZero();

        Outcome<String> retry = pay(key, scope + "-p2", runs);
        assertThat(retry.status()).isEqualTo(Outcome.Status.EXECUTED);
        assertThat(runs).hasValue(2);
        assertThat(payments(scope + "-p2")).isEqualTo(1);
        assertThat(records(key)).isEqualTo(1);
    }

    @Test
    void setRollbackOnlyUndoesBoth() {
        IdempotencyKey key = IdempotencyKey.of(scope, "k-3");
        transactions.executeWithoutResult(status -> {
            idempotency.execute(key, () -> {
                writePayment(scope + "-p1", 1250);
                return "paid";
            });
            status.setRollbackOnly();
        });
        assertThat(payments(scope + "-p1")).isZero();
        assertThat(records(key)).isZero();
    }

    @Test
    void aWorkThatThrowsRollsBackWithItsWrites() {
        IdempotencyKey key = IdempotencyKey.of(scope, "k-4");
        assertThatThrownBy(() -> transactions.execute(status -> idempotency.execute(key, () -> {
            writePayment(scope + "-p1", 1250);
            throw new IllegalArgumentException("card declined");
        }))).isInstanceOf(IllegalArgumentException.class).hasMessage("card declined");
        assertThat(payments(scope + "-p1")).isZero();
        assertThat(records(key)).isZero();
    }

    @Test
    void aChunkCommitsWithItsWrites_andRunsAgainOnlyItsNewItems() {
        AtomicInteger runs = new AtomicInteger();
        List<Outcome<String>> first = transactions.execute(status -> idempotency.executeChunk(List.of("a", "b"),
                item -> IdempotentCall.of(IdempotencyKey.of(scope, item), ResultCodec.string()), item -> {
                    runs.incrementAndGet();
                    writePayment(scope + "-" + item, 100);
                    return "paid " + item;
                }));
        List<Outcome<String>> again = transactions.execute(status -> idempotency.executeChunk(List.of("a", "b", "c"),
                item -> IdempotentCall.of(IdempotencyKey.of(scope, item), ResultCodec.string()), item -> {
                    runs.incrementAndGet();
                    writePayment(scope + "-" + item, 100);
                    return "paid " + item;
                }));
        assertThat(first).extracting(Outcome::status).containsOnly(Outcome.Status.EXECUTED);
        assertThat(again).extracting(Outcome::status)
                .containsExactly(Outcome.Status.REPLAYED, Outcome.Status.REPLAYED, Outcome.Status.EXECUTED);
        assertThat(runs).hasValue(3);
        assertThat(payments(scope + "-a") + payments(scope + "-b") + payments(scope + "-c")).isEqualTo(3);
    }

    @Test
    void outsideATransaction_isRefusedSayingHowToFixIt_andNothingIsWritten() {
        IdempotencyKey key = IdempotencyKey.of(scope, "k-5");
        AtomicInteger runs = new AtomicInteger();
        assertThatThrownBy(() -> idempotency.execute(key, () -> runs.incrementAndGet()))
                .isInstanceOf(TransactionRequiredException.class)
                .hasMessageContaining("no Spring-managed transaction")
                .hasMessageContaining("@Transactional")
                .hasMessageContaining("transactionTemplate.execute");
        assertThat(runs).hasValue(0);
        assertThat(records(key)).isZero();
    }
}
