package dev.idempotency.jakarta.transaction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.KeyPolicy;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.TransactionRequiredException;
import dev.idempotency.jakarta.testing.Jta;
import dev.idempotency.jdbc.Idempotent;
import io.agroal.api.AgroalDataSource;
import jakarta.transaction.Status;
import jakarta.transaction.TransactionManager;
import jakarta.transaction.UserTransaction;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Transactional mode in the application's own JTA transaction, and the library's own JTA
 * transactions, on Narayana with an Agroal pool it manages, against a real database: the business
 * code takes its own connections from the pool, as it would in a container, and the record shares
 * their transaction. Each database is a subclass.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractJtaTest {

    private static final String SCOPE = "jta-test";

    private AgroalDataSource dataSource;
    private final TransactionManager tm = Jta.transactionManager();
    private final UserTransaction ut = Jta.userTransaction();
    private Idempotency<Connection> engine;
    private JtaIdempotency idempotency;

    /** @return a pool on this run's database, managed by {@link Jta#transactionManager()} */
    abstract AgroalDataSource dataSource() throws Exception;

    @BeforeAll
    void start() throws Exception {
        dataSource = dataSource();
        // tag::build[]
        engine = Idempotent.builder().keyPolicy(KeyPolicy.builder().lockTimeout(Duration.ofSeconds(10)).build()).build();
        idempotency = JtaIdempotency.of(engine, dataSource, Jta.registry()); // or the TransactionManager, or UserTransaction
        // end::build[]
    }

    @AfterAll
    void stop() {
        if (dataSource != null) {
            dataSource.close();
        }
    }

    @AfterEach
    void noTransactionLeftOnTheThread() throws Exception {
        assertThat(tm.getStatus()).as("the test left a transaction on its thread").isEqualTo(Status.STATUS_NO_TRANSACTION);
    }

    // tag::business[]
    /** The business change: a payment inserted on a connection the code takes itself, as in a container. */
    private String pay(String key) throws Exception {
        try (Connection own = dataSource.getConnection()) { // enlisted in the thread's JTA transaction
            return Jta.insertPayment(own, SCOPE, key, "pay");
        }
    }
    // end::business[]

    // ---- JtaIdempotency: in the application's transaction -------------------------------------------

    @Test
    void aCommittedTransactionKeepsTheRecordAndTheBusinessRow() throws Exception {
        String key = key();
        // tag::execute[]
        ut.begin(); // or a @Transactional method, an EJB's container-managed transaction
        Outcome<String> outcome = idempotency.execute(IdempotencyKey.of(SCOPE, key), () -> pay(key));
        ut.commit(); // the payment and the key's record, together
        // end::execute[]

        assertThat(outcome.status()).isEqualTo(Outcome.Status.EXECUTED);
        assertThat(Jta.payments(dataSource, SCOPE, key)).isEqualTo(1);
        assertThat(Jta.recorded(dataSource, SCOPE, key)).isTrue();

        ut.begin();
        Outcome<String> again = idempotency.execute(IdempotencyKey.of(SCOPE, key), () -> pay(key));
        ut.commit();
        assertThat(again.status()).isEqualTo(Outcome.Status.REPLAYED);
        assertThat(again.value()).isEqualTo(outcome.value());
        assertThat(Jta.payments(dataSource, SCOPE, key)).isEqualTo(1);
    }

    @Test
    void aRolledBackTransactionKeepsNeitherTheRecordNorTheBusinessRow() throws Exception {
        String key = key();
        ut.begin();
        Outcome<String> outcome = idempotency.execute(IdempotencyKey.of(SCOPE, key), () -> pay(key));
        ut.rollback();

        assertThat(outcome.status()).isEqualTo(Outcome.Status.EXECUTED);
        assertThat(Jta.payments(dataSource, SCOPE, key)).isZero();
        assertThat(Jta.recorded(dataSource, SCOPE, key)).as("the record went with the business row").isFalse();

        ut.begin();
        Outcome<String> retry = idempotency.execute(IdempotencyKey.of(SCOPE, key), () -> pay(key));
        ut.commit();
        assertThat(retry.status()).as("nothing was kept: the retry runs").isEqualTo(Outcome.Status.EXECUTED);
        assertThat(Jta.payments(dataSource, SCOPE, key)).isEqualTo(1);
    }

    @Test
    void aCallOutsideATransactionIsRefusedAndWritesNothing() throws Exception {
        String key = key();
        AtomicInteger runs = new AtomicInteger();

        assertThatThrownBy(() -> idempotency.execute(IdempotencyKey.of(SCOPE, key), () -> runs.incrementAndGet()))
                .isInstanceOf(TransactionRequiredException.class)
                .hasMessageContaining("no JTA transaction is active on this thread")
                .hasMessageContaining("Nothing was written");
        assertThat(runs).hasValue(0);
        assertThat(Jta.recorded(dataSource, SCOPE, key)).isFalse();
    }

    @Test
    void aTransactionMarkedForRollbackIsRefused() throws Exception {
        String key = key();
        ut.begin();
        try {
            ut.setRollbackOnly();
            assertThatThrownBy(() -> idempotency.execute(IdempotencyKey.of(SCOPE, key), () -> pay(key)))
                    .isInstanceOf(TransactionRequiredException.class).hasMessageContaining("marked for rollback");
        } finally {
            ut.rollback();
        }
        assertThat(Jta.payments(dataSource, SCOPE, key)).isZero();
    }

    @Test
    void concurrentDuplicatesInTheirOwnTransactionsExecuteOnce() throws Exception {
        String key = key();
        int threads = 8;
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Outcome<String>>> all = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                all.add(pool.submit((Callable<Outcome<String>>) () -> {
                    start.await();
                    ut.begin();
                    try {
                        Outcome<String> outcome = idempotency.execute(IdempotencyKey.of(SCOPE, key), () -> {
                            runs.incrementAndGet();
                            return pay(key);
                        });
                        ut.commit();
                        return outcome;
                    } catch (Exception | Error e) {
                        ut.rollback();
                        throw e;
                    }
                }));
            }
            start.countDown();
            List<Outcome.Status> statuses = new ArrayList<>();
            for (Future<Outcome<String>> f : all) {
                statuses.add(f.get(60, TimeUnit.SECONDS).status());
            }
            assertThat(statuses).containsOnly(Outcome.Status.EXECUTED, Outcome.Status.REPLAYED);
            assertThat(statuses).filteredOn(s -> s == Outcome.Status.EXECUTED).hasSize(1);
        } finally {
            pool.shutdownNow();
        }
        assertThat(runs).hasValue(1);
        assertThat(Jta.payments(dataSource, SCOPE, key)).isEqualTo(1);
    }

    @Test
    void aFinalFailureNeedsASavepointRollbackWhichAgroalRefusesInsideAJtaTransaction() throws Exception {
        // Pins a limitation that docs/jakarta.md states: if a pool starts allowing it, this test says so.
        Idempotency<Connection> finals = Idempotent.builder().keyPolicy(KeyPolicy.builder().finalFailures(Declined.class).build()).build();
        JtaIdempotency withFinals = JtaIdempotency.of(finals, dataSource, tm);
        String key = key();
        ut.begin();
        try {
            assertThatThrownBy(() -> withFinals.execute(IdempotencyKey.of(SCOPE, key), () -> {
                pay(key);
                throw new Declined();
            })).isInstanceOf(IdempotencyStoreException.class).hasMessageContaining("savepoint")
                    .hasRootCauseMessage("Attempting to rollback while enlisted in a transaction");
        } finally {
            ut.rollback();
        }
        assertThat(Jta.payments(dataSource, SCOPE, key)).isZero();
        assertThat(Jta.recorded(dataSource, SCOPE, key)).isFalse();
    }

    /** A failure declared final. */
    static final class Declined extends Exception {
        private static final long serialVersionUID = 1L;

        Declined() {
            super("declined");
        }
    }

    // ---- JtaTransactions: the library's own JTA transactions ----------------------------------------

    @Test
    void theLibraryRunFormCommitsTheRecordWithTheBusinessRow() throws Exception {
        // tag::managed[]
        ManagedIdempotency<Connection> managedByTm = ManagedIdempotency.of(engine, JtaTransactions.of(tm, dataSource));
        ManagedIdempotency<Connection> managedByUt = ManagedIdempotency.of(engine, JtaTransactions.of(ut, dataSource));
        // end::managed[]
        for (ManagedIdempotency<Connection> managed : List.of(managedByTm, managedByUt)) {
            String key = key();
            Outcome<String> outcome = managed.execute(IdempotencyKey.of(SCOPE, key), tx -> pay(key));

            assertThat(outcome.status()).isEqualTo(Outcome.Status.EXECUTED);
            assertThat(Jta.payments(dataSource, SCOPE, key)).isEqualTo(1);
            assertThat(Jta.recorded(dataSource, SCOPE, key)).isTrue();
            assertThat(managed.execute(IdempotencyKey.of(SCOPE, key), tx -> pay(key)).status()).isEqualTo(Outcome.Status.REPLAYED);
        }
    }

    @Test
    void theLibraryRunFormRollsBackTheRecordWithTheBusinessRowWhenTheWorkThrows() throws Exception {
        for (ManagedIdempotency<Connection> managed : List.of(ManagedIdempotency.of(engine, JtaTransactions.of(tm, dataSource)),
                ManagedIdempotency.of(engine, JtaTransactions.of(ut, dataSource)))) {
            String key = key();
            assertThatThrownBy(() -> managed.execute(IdempotencyKey.of(SCOPE, key), tx -> {
                pay(key);
                throw new IllegalStateException("the work failed after its write");
            })).isInstanceOf(IllegalStateException.class).hasMessage("the work failed after its write");

            assertThat(Jta.payments(dataSource, SCOPE, key)).isZero();
            assertThat(Jta.recorded(dataSource, SCOPE, key)).isFalse();
        }
    }

    @Test
    void theLibraryRunFormRecordsAFinalFailureOnAgroalSinceItTakesNoSavepoint() throws Exception {
        Idempotency<Connection> finals = Idempotent.builder().keyPolicy(KeyPolicy.builder().finalFailures(Declined.class).build()).build();
        for (ManagedIdempotency<Connection> managed : List.of(ManagedIdempotency.of(finals, JtaTransactions.of(tm, dataSource)),
                ManagedIdempotency.of(finals, JtaTransactions.of(ut, dataSource)))) {
            String key = key();
            Outcome<String> failed = managed.execute(IdempotencyKey.of(SCOPE, key), tx -> {
                pay(key);
                throw new Declined();
            });
            assertThat(failed.status()).isEqualTo(Outcome.Status.FAILED);
            assertThat(Jta.payments(dataSource, SCOPE, key)).as("the declined work's payment is rolled back").isZero();
            assertThat(Jta.recorded(dataSource, SCOPE, key)).isTrue();
            Outcome<String> again = managed.execute(IdempotencyKey.of(SCOPE, key), tx -> pay(key));
            assertThat(again.status()).isEqualTo(Outcome.Status.FAILED);
            assertThat(Jta.payments(dataSource, SCOPE, key)).as("the retry did not pay").isZero();
        }
    }

    @Test
    void theTransactionManagerFormSuspendsAnEnclosingTransactionAndCommitsOnItsOwn() throws Exception {
        ManagedIdempotency<Connection> managed = ManagedIdempotency.of(engine, JtaTransactions.of(tm, dataSource));
        String outer = key();
        String inner = key();
        tm.begin();
        try {
            pay(outer);
            assertThat(managed.execute(IdempotencyKey.of(SCOPE, inner), tx -> pay(inner)).status()).isEqualTo(Outcome.Status.EXECUTED);
            assertThat(tm.getStatus()).as("the enclosing transaction is back on the thread").isEqualTo(Status.STATUS_ACTIVE);
        } finally {
            tm.rollback();
        }
        assertThat(Jta.payments(dataSource, SCOPE, outer)).isZero();
        assertThat(Jta.payments(dataSource, SCOPE, inner)).as("committed on its own").isEqualTo(1);
        assertThat(Jta.recorded(dataSource, SCOPE, inner)).isTrue();
    }

    @Test
    void theUserTransactionFormRefusesToRunInsideATransaction() throws Exception {
        ManagedIdempotency<Connection> managed = ManagedIdempotency.of(engine, JtaTransactions.of(ut, dataSource));
        String key = key();
        ut.begin();
        try {
            assertThatThrownBy(() -> managed.execute(IdempotencyKey.of(SCOPE, key), tx -> pay(key)))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("cannot suspend");
        } finally {
            ut.rollback();
        }
        assertThat(Jta.recorded(dataSource, SCOPE, key)).isFalse();
    }

    private static String key() {
        return UUID.randomUUID().toString();
    }
}
