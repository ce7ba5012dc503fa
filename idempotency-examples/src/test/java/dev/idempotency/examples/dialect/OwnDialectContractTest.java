package dev.idempotency.examples.dialect;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.jdbc.dialect.TableName;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.testkit.IdempotencyStoreContract;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.InstantSource;
import java.util.List;
import org.h2.jdbcx.JdbcConnectionPool;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The testkit's whole contract (leases and chunks included) on {@link OwnDialect}, a dialect from
 * outside the library, on an embedded H2 database; and the DDL found in this project's resources.
 */
// tag::contract[]
class OwnDialectContractTest extends IdempotencyStoreContract<Connection> {

    private final JdbcConnectionPool pool =
            JdbcConnectionPool.create("jdbc:h2:mem:own-dialect;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000", "sa", "");
    private final JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().dialect(new OwnDialect()).build();

    @Override
    protected IdempotencyStore<Connection> createStore(InstantSource clock) {
        pool.setMaxConnections(20);
        store.createTableIfMissing(pool);
        return store;
    }

    @Override
    protected Connection begin() throws SQLException {
        Connection c = pool.getConnection();
        c.setAutoCommit(false);
        return c;
    }

    @Override
    protected void commit(Connection tx) throws SQLException {
        try (tx) {
            tx.commit();
        }
    }

    @Override
    protected void rollback(Connection tx) throws SQLException {
        try (tx) {
            tx.rollback();
        }
    }
    // end::contract[]

    /** Empties both tables between tests. */
    @Override
    protected void reset() throws SQLException {
        TableName table = store.table();
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.executeUpdate("DELETE FROM " + table);
            s.executeUpdate("DELETE FROM " + table.pending());
        }
    }

    /** A connection in auto-commit mode and a closed one (H2 ignores setReadOnly(true)). */
    @Override
    protected List<UnusableTransaction<Connection>> unusableTransactions() throws SQLException {
        Connection autoCommit = pool.getConnection();
        Connection closed = pool.getConnection();
        closed.close();
        return List.of(new UnusableTransaction<>("a connection in auto-commit mode", autoCommit, autoCommit),
                new UnusableTransaction<>("a closed connection", closed, null));
    }

    @Test
    void theDdlComesFromThisProjectsResources() throws SQLException {
        try (Connection c = pool.getConnection()) {
            assertThat(store.ddl(c)).contains("described from outside the library").contains("CREATE TABLE IF NOT EXISTS "
                    + store.table());
        }
    }

    @AfterAll
    void closePool() {
        pool.dispose();
    }
}
