package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.KeyPolicy;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.RetryPolicy;
import dev.idempotency.testsupport.DatabaseServer;
import dev.idempotency.testsupport.TestDatabases;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Transactions that {@link JdbcTransactions} runs on PostgreSQL, where the store leaves a result
 * (or a write-last record) to travel with the {@code COMMIT}: what is sent, and in which state the
 * connection is given back when the commit's write fails. The failure paths run on one physical
 * connection whose {@code close()} gives it back without resetting it, as a pool that does not roll
 * back on return would: a transaction left aborted there fails the next one.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresOwnedTransactionsTest {

    private static final String TABLE = "owned_record";

    private HikariDataSource pool;
    private final JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().table(TABLE).build();
    /** The same table through {@link DeferringBaseDialect}. */
    private final JdbcIdempotencyStore deferringBase = JdbcIdempotencyStore.builder().table(TABLE).dialect(new DeferringBaseDialect()).build();
    private final AtomicInteger runs = new AtomicInteger();

    @BeforeAll
    void open() throws SQLException {
        pool = TestDatabases.postgres();
        store.createTableIfMissing(pool);
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS owned_effect (k VARCHAR(300) NOT NULL)");
        }
    }

    @AfterAll
    void close() {
        if (pool != null) {
            pool.close();
        }
    }

    private static IdempotencyKey key() {
        return IdempotencyKey.of("owned", UUID.randomUUID().toString());
    }

    private String effect(Connection c, IdempotencyKey key) throws SQLException {
        int run = runs.incrementAndGet();
        try (PreparedStatement s = c.prepareStatement("INSERT INTO owned_effect (k) VALUES (?)")) {
            s.setString(1, key.toString());
            s.executeUpdate();
        }
        return "run-" + run;
    }

    private static void delete(Connection c, IdempotencyKey key) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("DELETE FROM " + TABLE + " WHERE scope = ? AND key_id = ?")) {
            s.setString(1, key.scope());
            s.setString(2, key.id());
            assertThat(s.executeUpdate()).isEqualTo(1);
        }
    }

    private int count(String sql, IdempotencyKey key) throws SQLException {
        return Tx.count(pool, sql.replace("?", "'" + key.id() + "'"));
    }

    /** @return the pool, each connection it hands out counting its statements in {@code statements} */
    private DataSource counting(AtomicInteger statements) {
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                    Object result = invoke(pool, method, args);
                    return result instanceof Connection c ? CountingConnection.wrap(c, statements) : result;
                });
    }

    private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /**
     * Three new keys in one transaction: each key's claim sends the result its predecessor left
     * pending, and the last result travels with the {@code COMMIT}, so each result is sent once:
     * three claims, two completions, and the completion with the commit.
     */
    @Test
    void eachPendingResultIsSentOnceBeforeTheNextClaimAndTheLastWithTheCommit() throws Exception {
        Idempotency<Connection> engine = Idempotency.of(store);
        AtomicInteger statements = new AtomicInteger();
        List<IdempotencyKey> keys = List.of(key(), key(), key());
        List<Outcome<String>> outcomes = JdbcTransactions.of(counting(statements)).inTransaction(c -> List.of(
                engine.execute(keys.get(0), c, () -> "a"), engine.execute(keys.get(1), c, () -> "b"),
                engine.execute(keys.get(2), c, () -> "c")));
        assertThat(outcomes).allMatch(Outcome::isExecuted);
        assertThat(statements).as("3 claims, 2 completions before the next claim, 1 completion with the COMMIT").hasValue(6);
        for (IdempotencyKey key : keys) {
            assertThat(count("SELECT COUNT(*) FROM " + TABLE + " WHERE key_id = ? AND status = 'COMPLETED'", key)).isEqualTo(1);
        }
    }

    /**
     * A key executed and then met again in a chunk of the same transaction: the chunk's claim sends
     * the pending result first, so the chunk replays the key instead of meeting its own record in
     * progress.
     */
    @Test
    void aChunkAfterAnExecutionInTheSameTransactionReplaysItsKey() throws Exception {
        Idempotency<Connection> engine = Idempotency.of(store);
        IdempotencyKey executed = key();
        IdempotencyKey fresh = key();
        List<Outcome<String>> chunk = JdbcTransactions.of(pool).inTransaction(c -> {
            engine.execute(executed, c, () -> "single");
            return engine.executeChunk(c, List.of(executed, fresh), k -> IdempotentCall.of(k, dev.idempotency.ResultCodec.string()),
                    k -> "chunk");
        });
        assertThat(chunk.get(0).status()).isEqualTo(Outcome.Status.REPLAYED);
        assertThat(chunk.get(0).value()).isEqualTo("single");
        assertThat(chunk.get(1).isExecuted()).isTrue();
    }

    /**
     * A result left pending whose record is deleted before the transaction's next claim (here by
     * the caller's own statement, as a concurrent purge could): that claim fails naming the key, and
     * nothing of the transaction is committed.
     */
    @Test
    void aPendingResultWhoseRecordVanishedFailsTheNextClaim() throws Exception {
        Idempotency<Connection> engine = Idempotency.of(store);
        IdempotencyKey first = key();
        IdempotencyKey second = key();
        assertThatThrownBy(() -> JdbcTransactions.of(pool).inTransaction(c -> {
            engine.execute(first, c, () -> effect(c, first));
            delete(c, first);
            return engine.execute(second, c, () -> effect(c, second));
        })).isInstanceOf(IdempotencyStoreException.class).hasMessageContaining("not found")
                .satisfies(e -> assertThat(((IdempotencyStoreException) e).keyId()).isEqualTo(first.id()));
        assertThat(count("SELECT COUNT(*) FROM owned_effect WHERE k LIKE '%' || ?", first)).isZero();
        assertThat(count("SELECT COUNT(*) FROM " + TABLE + " WHERE key_id = ?", second)).isZero();
    }

    /**
     * The base dialect on PostgreSQL, with its own {@code completeAndCommit} and
     * {@code writeLastAndCommit} (an update or write, then {@code commit()}) used for transactions
     * the library runs, as a dialect of one's own may keep them: they leave the rollback of a
     * refusal or a failure to the caller.
     */
    static final class DeferringBaseDialect extends dev.idempotency.jdbc.dialect.SqlDialect {
        @Override
        public String name() {
            return "the base dialect, completing and writing last with the commit";
        }

        @Override
        public String ddlResource() {
            return "dev/idempotency/jdbc/ddl/postgresql.sql";
        }

        @Override
        public boolean completesWithCommit() {
            return true;
        }

        @Override
        public boolean writesLastWithCommit() {
            return true;
        }
    }

    /**
     * With the base dialect's {@code completeAndCommit}, the result sent with the commit is
     * committed: the pool's rollback when the connection is given back finds nothing to undo, and a
     * retry replays.
     */
    @Test
    void theBaseDialectsCompleteAndCommitCommits() throws Exception {
        ManagedIdempotency<Connection> managed = ManagedIdempotency.builder(Idempotency.of(deferringBase), JdbcTransactions.of(pool))
                .build();
        IdempotencyKey key = key();
        String value = managed.execute(key, c -> effect(c, key)).value();
        assertThat(count("SELECT COUNT(*) FROM " + TABLE + " WHERE key_id = ? AND status = 'COMPLETED'", key)).isEqualTo(1);
        assertThat(count("SELECT COUNT(*) FROM owned_effect WHERE k LIKE '%' || ?", key)).isEqualTo(1);
        Outcome<String> retry = managed.execute(key, c -> effect(c, key));
        assertThat(retry.status()).isEqualTo(Outcome.Status.REPLAYED);
        assertThat(retry.value()).isEqualTo(value);
    }

    /** One physical connection, handed out again and again and never reset by its {@code close()}. */
    private static final class OneConnection implements AutoCloseable {
        final Connection real;

        OneConnection() throws SQLException {
            DatabaseServer server = DatabaseServer.postgres();
            real = DriverManager.getConnection(server.url(), server.user(), server.password());
        }

        DataSource dataSource() {
            return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class},
                    (p, m, a) -> {
                        if (!m.getName().equals("getConnection")) {
                            throw new UnsupportedOperationException(m.getName());
                        }
                        return Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                                (cp, cm, ca) -> cm.getName().equals("close") ? null : invoke(real, cm, ca));
                    });
        }

        /** @return the library over {@code under}, running its transactions on this connection, without retries */
        ManagedIdempotency<Connection> managed(JdbcIdempotencyStore under) {
            return ManagedIdempotency.builder(Idempotency.of(under), JdbcTransactions.of(dataSource())).retryPolicy(RetryPolicy.none()).build();
        }

        /** @return whether the connection's transaction accepts a statement (it is not left aborted) */
        boolean usable() {
            try (Statement s = real.createStatement()) {
                s.execute("SELECT 1");
                return true;
            } catch (SQLException aborted) {
                return false;
            }
        }

        @Override
        public void close() throws SQLException {
            real.close();
        }
    }

    /**
     * The result travels with the {@code COMMIT}, and the record is gone (the work deleted it): the
     * commit fails, names the key, keeps nothing, and rolls the aborted transaction back before the
     * connection is given back.
     */
    @Test
    void aResultWhoseRecordVanishedFailsTheCommitAndTheConnectionIsRolledBack() throws Exception {
        vanishedBeforeTheCommit(store);
    }

    /** As above, with the base dialect's {@code completeAndCommit}, which reports the record missing as 02000. */
    @Test
    void aResultWhoseRecordVanishedFailsTheBaseDialectsCommitAndTheConnectionIsRolledBack() throws Exception {
        vanishedBeforeTheCommit(deferringBase);
    }

    private void vanishedBeforeTheCommit(JdbcIdempotencyStore under) throws Exception {
        try (OneConnection one = new OneConnection()) {
            ManagedIdempotency<Connection> managed = one.managed(under);
            IdempotencyKey key = key();
            assertThatThrownBy(() -> managed.execute(key, c -> {
                String value = effect(c, key);
                delete(c, key);
                return value;
            })).isInstanceOf(IdempotencyStoreException.class).hasMessageContaining("not found");
            assertThat(one.usable()).as("the failed transaction was rolled back").isTrue();
            assertThat(managed.execute(key(), c -> "next").isExecuted()).as("the connection's next transaction commits").isTrue();
            assertThat(count("SELECT COUNT(*) FROM owned_effect WHERE k LIKE '%' || ?", key)).isZero();
            assertThat(managed.execute(key, c -> effect(c, key)).isExecuted()).as("the retry runs on the same connection").isTrue();
        }
    }

    /**
     * A write-last record refused at the {@code COMMIT} (the key has a record): the transaction is
     * rolled back before the connection is given back, so the replay that follows, on the same
     * connection, reads the record, and the connection's next transaction commits nothing of the
     * refused duplicate.
     */
    @Test
    void aRefusedWriteLastIsRolledBackAndTheReplayRunsOnTheSameConnection() throws Exception {
        refusedWriteLastKeepsNothing(store);
    }

    /**
     * As above with the base dialect's {@code writeLastAndCommit}, as a dialect of one's own may keep
     * it: it answers a refusal without ending the transaction, the SPI leaving the rollback to the
     * caller, and here it is sent with the {@code COMMIT} ({@code writesLastWithCommit}).
     */
    @Test
    void aWriteLastRefusedByADialectThatLeavesTheRollbackToTheCallerKeepsNothing() throws Exception {
        refusedWriteLastKeepsNothing(deferringBase);
    }

    private void refusedWriteLastKeepsNothing(JdbcIdempotencyStore under) throws Exception {
        try (OneConnection one = new OneConnection()) {
            ManagedIdempotency<Connection> managed = one.managed(under);
            IdempotencyKey key = key();
            Outcome<String> first = managed.writeLast(key, c -> effect(c, key));
            Outcome<String> again = managed.writeLast(key, c -> effect(c, key));
            assertThat(again.status()).isEqualTo(Outcome.Status.REPLAYED);
            assertThat(again.value()).isEqualTo(first.value());
            assertThat(one.usable()).isTrue();
            assertThat(managed.execute(key(), c -> "next").isExecuted()).as("the connection's next transaction commits").isTrue();
            assertThat(count("SELECT COUNT(*) FROM owned_effect WHERE k LIKE '%' || ?", key)).as("the duplicate's work rolled back")
                    .isEqualTo(1);
        }
    }

    /**
     * Under REPEATABLE READ, a record committed by another transaction after this one's snapshot
     * makes the write-last {@code INSERT} at the {@code COMMIT} a serialization failure: it is rolled
     * back, reaches the retry as a conflict, and the retry, on the same connection, replays the
     * other transaction's value.
     */
    @Test
    void aWriteLastThatMeetsARecordCommittedAfterItsSnapshotIsAConflictAndTheRetryReplays() throws Exception {
        try (OneConnection one = new OneConnection()) {
            one.real.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            List<Throwable> retried = new java.util.concurrent.CopyOnWriteArrayList<>();
            Idempotency<Connection> watched = Idempotency.builder(store).listener(new dev.idempotency.IdempotencyListener() {
                @Override
                public void onRetry(IdempotencyKey k, int attempt, Throwable failure, Duration backoff) {
                    retried.add(failure);
                }
            }).build();
            ManagedIdempotency<Connection> managed = ManagedIdempotency.builder(watched,
                    JdbcTransactions.of(one.dataSource()))
                    .retryPolicy(RetryPolicy.builder().maxAttempts(3).backoff(Duration.ZERO, Duration.ZERO).build()).build();
            ManagedIdempotency<Connection> other = ManagedIdempotency.builder(Idempotency.of(store), JdbcTransactions.of(pool)).build();
            IdempotencyKey key = key();
            AtomicInteger attempts = new AtomicInteger();
            Outcome<String> outcome = managed.writeLast(key, c -> {
                String value = effect(c, key); // the snapshot is taken here
                if (attempts.incrementAndGet() == 1) {
                    assertThat(other.writeLast(key, o -> "the other's").isExecuted()).isTrue();
                }
                return value;
            });
            assertThat(outcome.status()).isEqualTo(Outcome.Status.REPLAYED);
            assertThat(outcome.value()).isEqualTo("the other's");
            assertThat(attempts).as("the conflict was retried once, and the retry replayed").hasValue(2);
            assertThat(retried).as("one retry, of a conflict at the commit").hasSize(1);
            System.out.println("retried: " + retried.get(0) + " / cause: " + retried.get(0).getCause());
            assertThat(retried.get(0)).isInstanceOf(dev.idempotency.TransactionConflictException.class);
            assertThat(one.usable()).isTrue();
        }
    }
}
