package dev.idempotency.examples.store;

import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.testkit.ChunkContract;
import dev.idempotency.testkit.ConcurrencyContract;
import dev.idempotency.testkit.ExampleContract;
import dev.idempotency.testkit.StatefulContract;
import dev.idempotency.testkit.StoreFixture;
import dev.idempotency.testkit.WriteLastContract;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.InstantSource;
import java.util.List;
import org.h2.jdbcx.JdbcConnectionPool;
import org.junit.jupiter.api.AfterAll;

// tag::contract-test[]
class ChargeKeyStoreContractTest extends StoreFixture<Connection>
        implements ExampleContract<Connection>, ConcurrencyContract<Connection>, StatefulContract<Connection>,
                   ChunkContract<Connection>, WriteLastContract<Connection> {

    private final JdbcConnectionPool pool =
            JdbcConnectionPool.create("jdbc:h2:mem:charges;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000", "sa", "");

    @Override
    protected IdempotencyStore<Connection> createStore(InstantSource clock) throws SQLException {
        pool.setMaxConnections(20);
        ChargeKeyStore.createTable(pool);
        return new ChargeKeyStore();
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

    /**
     * What the store refuses: a connection in auto-commit mode and a closed one. Not a read-only
     * connection: H2 ignores setReadOnly(true), so that connection stays usable and the store
     * rightly accepts it. On PostgreSQL or MariaDB, whose drivers honour it, add one.
     */
    @Override
    protected List<UnusableTransaction<Connection>> unusableTransactions() throws SQLException {
        Connection autoCommit = pool.getConnection(); // auto-commit on: no transaction to carry the record
        Connection closed = pool.getConnection();
        closed.close();
        return List.of(new UnusableTransaction<>("a connection in auto-commit mode", autoCommit, autoCommit),
                new UnusableTransaction<>("a closed connection", closed, null));
    }

    @AfterAll
    void closePool() {
        pool.dispose();
    }
}
// end::contract-test[]
