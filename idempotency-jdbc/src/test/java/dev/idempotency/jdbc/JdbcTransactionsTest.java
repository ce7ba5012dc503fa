package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.RetryPolicy;
import dev.idempotency.TransactionConflictException;
import dev.idempotency.testsupport.TestDatabases;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransactionRollbackException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Contract 3.6 (docs/contract.md), conflicts that appear only at COMMIT, in transactions the
 * library runs: a commit that the database refuses with a serialization failure (injected here into
 * real H2 connections: the transaction is rolled back for real, then the commit reports SQLState
 * 40001, as a Galera certification failure does) reaches the retry as
 * {@link TransactionConflictException}; the whole transaction runs again, and nothing of the
 * refused one is left.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class JdbcTransactionsTest {

    private HikariDataSource pool;
    private final AtomicInteger commitsToRefuse = new AtomicInteger();

    @BeforeAll
    void open() throws SQLException {
        pool = TestDatabases.h2("transactions");
        JdbcIdempotencyStore.ofDefaults().createTableIfMissing(pool);
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.executeUpdate("CREATE TABLE IF NOT EXISTS booking (id VARCHAR(64) NOT NULL)");
        }
    }

    @AfterAll
    void close() {
        pool.close();
    }

    /** Connections of the pool whose commit, while {@link #commitsToRefuse} is positive, rolls back and reports 40001. */
    private DataSource refusingCommits() {
        return (DataSource) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {DataSource.class}, (p, m, a) -> {
            Object result = invoke(pool, m, a);
            if (!(result instanceof Connection real)) {
                return result;
            }
            return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class}, (cp, cm, ca) -> {
                if (cm.getName().equals("commit") && commitsToRefuse.getAndDecrement() > 0) {
                    real.rollback();
                    throw new SQLTransactionRollbackException("could not serialize access (injected at commit)", "40001");
                }
                return invoke(real, cm, ca);
            });
        });
    }

    private static Object invoke(Object target, java.lang.reflect.Method m, Object[] a) throws Throwable {
        try {
            return m.invoke(target, a);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    private int bookings(String id) throws SQLException {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement();
             java.sql.ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM booking WHERE id = '" + id + "'")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    @Test
    void aConflictAtCommitIsRetriedWholeAndNothingOfTheRefusedTransactionIsLeft() throws Exception {
        List<Integer> retried = new ArrayList<>();
        Idempotency<Connection> engine = Idempotency.builder(JdbcIdempotencyStore.ofDefaults()).listener(new IdempotencyListener() {
            @Override
            public void onRetry(IdempotencyKey key, int attempt, Throwable failure, Duration backoff) {
                assertThat(failure).isInstanceOf(TransactionConflictException.class).hasRootCauseInstanceOf(SQLException.class);
                retried.add(attempt);
            }
        }).build();
        ManagedIdempotency<Connection> managed = ManagedIdempotency.builder(engine, JdbcTransactions.of(refusingCommits()))
                .retryPolicy(RetryPolicy.builder().backoff(Duration.ZERO, Duration.ZERO).build()).build();
        IdempotencyKey key = IdempotencyKey.of("commit", "conflict");
        AtomicInteger runs = new AtomicInteger();
        commitsToRefuse.set(2);
        Outcome<String> outcome = managed.execute(key, tx -> {
            try (Statement s = tx.createStatement()) {
                s.executeUpdate("INSERT INTO booking (id) VALUES ('conflict')");
            }
            return "booked-" + runs.incrementAndGet();
        });
        assertThat(outcome).isInstanceOf(Outcome.Executed.class).extracting(Outcome::value).isEqualTo("booked-3");
        assertThat(retried).containsExactly(1, 2);
        assertThat(bookings("conflict")).as("the refused commits left nothing").isEqualTo(1);
        assertThat(managed.execute(key, tx -> "again").value()).isEqualTo("booked-3");
    }

    @Test
    void aConflictAtCommitThatOutlastsTheRetriesReachesTheCallerTypedAndLeavesNothing() throws Exception {
        ManagedIdempotency<Connection> managed = ManagedIdempotency.builder(Idempotency.of(JdbcIdempotencyStore.ofDefaults()),
                JdbcTransactions.of(refusingCommits())).retryPolicy(RetryPolicy.none()).build();
        IdempotencyKey key = IdempotencyKey.of("commit", "refused");
        commitsToRefuse.set(1);
        assertThatThrownBy(() -> managed.execute(key, tx -> {
            try (Statement s = tx.createStatement()) {
                s.executeUpdate("INSERT INTO booking (id) VALUES ('refused')");
            }
            return "booked";
        })).isInstanceOf(TransactionConflictException.class).satisfies(e -> assertThat(((TransactionConflictException) e).isRetryable()).isTrue());
        assertThat(bookings("refused")).isZero();
        assertThat(managed.execute(key, tx -> "now").value()).as("the key is free: nothing was recorded").isEqualTo("now");
    }

    // ---- failure paths of the transactions it runs ---------------------------------------------------

    /**
     * One physical connection handed out again and again, whose {@code close()} gives it back without
     * resetting it (as a pool that does not roll back on return), and whose {@code rollback} and
     * {@code setAutoCommit} may be made to fail; {@link #closes} counts the connections given back.
     */
    private final class OneConnection {
        final Connection real;
        final AtomicInteger closes = new AtomicInteger();
        volatile boolean failRollback;
        volatile boolean failBegin;

        OneConnection() throws SQLException {
            real = java.sql.DriverManager.getConnection("jdbc:h2:mem:transactions-one;DB_CLOSE_DELAY=-1");
            try (Statement s = real.createStatement()) {
                s.executeUpdate("CREATE TABLE IF NOT EXISTS booking (id VARCHAR(64) NOT NULL)");
            }
        }

        DataSource dataSource() {
            return (DataSource) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {DataSource.class}, (p, m, a) -> {
                if (!m.getName().equals("getConnection")) {
                    throw new UnsupportedOperationException(m.getName());
                }
                return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class}, (cp, cm, ca) -> {
                    switch (cm.getName()) {
                        case "close":
                            closes.incrementAndGet();
                            return null;
                        case "rollback":
                            if (failRollback) {
                                throw new SQLException("the connection to the server was lost (injected at rollback)", "08006");
                            }
                            break;
                        case "setAutoCommit":
                            if (failBegin) {
                                throw new SQLException("the connection to the server was lost (injected at begin)", "08006");
                            }
                            break;
                        default:
                            break;
                    }
                    return invoke(real, cm, ca);
                });
            });
        }

        int rowsSeen(String id) throws SQLException {
            try (Statement s = real.createStatement(); java.sql.ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM booking WHERE id = '" + id + "'")) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    @Test
    void aWorkThatThrowsIsRolledBackBeforeItsConnectionIsGivenBack() throws Exception {
        OneConnection one = new OneConnection();
        try {
            JdbcTransactions transactions = JdbcTransactions.of(one.dataSource());
            IllegalStateException thrown = new IllegalStateException("the work failed");
            assertThatThrownBy(() -> transactions.inTransaction(tx -> {
                try (Statement s = tx.createStatement()) {
                    s.executeUpdate("INSERT INTO booking (id) VALUES ('thrown')");
                }
                throw thrown;
            })).isSameAs(thrown);
            assertThat(one.closes).as("the connection is given back").hasValue(1);
            assertThat(one.rowsSeen("thrown")).as("even a connection that is not reset holds nothing of the failed work").isZero();
        } finally {
            one.real.close();
        }
    }

    @Test
    void aRollbackThatFailsTooIsAddedToTheWorksFailure() throws Exception {
        OneConnection one = new OneConnection();
        try {
            one.failRollback = true;
            IllegalStateException thrown = new IllegalStateException("the work failed");
            assertThatThrownBy(() -> JdbcTransactions.of(one.dataSource()).inTransaction(tx -> {
                throw thrown;
            })).isSameAs(thrown);
            assertThat(thrown.getSuppressed()).singleElement().isInstanceOf(SQLException.class)
                    .extracting(Throwable::getMessage).asString().contains("injected at rollback");
            assertThat(one.closes).hasValue(1);
        } finally {
            one.real.rollback();
            one.real.close();
        }
    }

    @Test
    void aTransactionThatCannotBeginIsReportedAndItsConnectionGivenBack() throws Exception {
        OneConnection one = new OneConnection();
        try {
            one.failBegin = true;
            AtomicInteger runs = new AtomicInteger();
            assertThatThrownBy(() -> JdbcTransactions.of(one.dataSource()).inTransaction(tx -> runs.incrementAndGet()))
                    .isInstanceOf(dev.idempotency.IdempotencyStoreException.class).hasMessageContaining("could not begin a transaction")
                    .hasRootCauseMessage("the connection to the server was lost (injected at begin)");
            assertThat(runs).as("the work never ran").hasValue(0);
            assertThat(one.closes).as("the connection is given back").hasValue(1);
        } finally {
            one.real.close();
        }
    }
}
