package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.Outcome;
import dev.idempotency.testsupport.TestDatabases;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Contract 7 (docs/contract.md): the database connection is lost in the middle of an attempt (the
 * server ends the session, as a failover or a crashed process would). The error reaches the caller,
 * no outcome is invented, nothing half-written survives, and the retry after recovery is still
 * exactly-once.
 */
class ConnectionLossTest {

    /** How to find and end a session on each server. */
    record Server(String name, Supplier<HikariDataSource> pool, String whoAmI, String kill) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Arguments> servers() {
        return Stream.of(
                Arguments.of(new Server("PostgreSQL", TestDatabases::postgres, "SELECT pg_backend_pid()", "SELECT pg_terminate_backend(CAST(? AS INTEGER))")),
                Arguments.of(new Server("MariaDB", TestDatabases::mariadb, "SELECT CONNECTION_ID()", "KILL CONNECTION ?")));
    }

    private final AtomicInteger executions = new AtomicInteger();

    @ParameterizedTest(name = "{0}")
    @MethodSource("servers")
    void aConnectionLostBeforeCommitLeavesNothingAndTheRetryRunsOnce(Server server) throws Exception {
        try (HikariDataSource ds = server.pool().get()) {
            Idempotency<Connection> idem = prepare(ds);
            IdempotencyKey key = IdempotencyKey.of("loss", UUID.randomUUID().toString());

            Connection doomed = ds.getConnection();
            doomed.setAutoCommit(false);
            long session = sessionId(doomed, server);
            assertThatThrownBy(() -> idem.execute(key, doomed, () -> {
                String receipt = work(doomed, key);
                kill(ds, server, session); // the session ends after the work, before the result is recorded
                return receipt;
            })).isInstanceOf(IdempotencyStoreException.class).hasCauseInstanceOf(SQLException.class)
                    .hasMessageContaining(key.id());
            try {
                doomed.rollback();
            } catch (SQLException alreadyGone) {
                // the caller's rollback fails too: the server rolled the transaction back itself
            } finally {
                closeQuietly(doomed);
            }

            assertThat(count(ds, "SELECT COUNT(*) FROM loss_effect WHERE k = '" + key.id() + "'")).isZero();
            assertThat(count(ds, "SELECT COUNT(*) FROM loss_record WHERE key_id = '" + key.id() + "'")).isZero();
            Outcome<String> retry = Tx.commit(ds, c -> idem.execute(key, c, () -> work(c, key)));
            Outcome<String> again = Tx.commit(ds, c -> idem.execute(key, c, () -> work(c, key)));
            assertThat(retry.isExecuted()).isTrue();
            assertThat(again.status()).isEqualTo(Outcome.Status.REPLAYED);
            assertThat(again.value()).isEqualTo(retry.value());
            assertThat(count(ds, "SELECT COUNT(*) FROM loss_effect WHERE k = '" + key.id() + "'")).isEqualTo(1);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("servers")
    void aConnectionLostAfterCommitBeforeTheAnswerReplaysOnRetry(Server server) throws Exception {
        try (HikariDataSource ds = server.pool().get()) {
            Idempotency<Connection> idem = prepare(ds);
            IdempotencyKey key = IdempotencyKey.of("loss", UUID.randomUUID().toString());

            Connection c = ds.getConnection();
            c.setAutoCommit(false);
            Outcome<String> first = idem.execute(key, c, () -> work(c, key));
            c.commit();
            kill(ds, server, sessionId(c, server)); // the answer never reaches the client
            closeQuietly(c);

            Outcome<String> retry = Tx.commit(ds, r -> idem.execute(key, r, () -> work(r, key)));
            assertThat(retry.status()).isEqualTo(Outcome.Status.REPLAYED);
            assertThat(retry.value()).isEqualTo(first.value());
            assertThat(count(ds, "SELECT COUNT(*) FROM loss_effect WHERE k = '" + key.id() + "'")).isEqualTo(1);
        }
    }

    private static Idempotency<Connection> prepare(HikariDataSource ds) throws SQLException {
        JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().table("loss_record").build();
        store.createTableIfMissing(ds);
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(true);
            s.execute("CREATE TABLE IF NOT EXISTS loss_effect (k VARCHAR(100) NOT NULL)");
        }
        return Idempotency.of(store);
    }

    private String work(Connection c, IdempotencyKey key) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("INSERT INTO loss_effect (k) VALUES (?)")) {
            s.setString(1, key.id());
            s.executeUpdate();
        }
        return "receipt-" + executions.incrementAndGet();
    }

    private static long sessionId(Connection c, Server server) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(server.whoAmI())) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static void kill(HikariDataSource ds, Server server, long session) throws SQLException {
        try (Connection admin = ds.getConnection(); PreparedStatement s = admin.prepareStatement(server.kill())) {
            admin.setAutoCommit(true);
            s.setLong(1, session);
            s.execute();
        }
    }

    private static int count(HikariDataSource ds, String sql) throws SQLException {
        return Tx.count(ds, sql);
    }

    private static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (SQLException ignored) {
            // the session is gone already
        }
    }
}
