package dev.idempotency.examples.store;

import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.testkit.IdempotencyStoreContract;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.InstantSource;
import org.h2.jdbcx.JdbcConnectionPool;
import org.junit.jupiter.api.AfterAll;

// tag::contract-test[]
class ChargeKeyStoreContractTest extends IdempotencyStoreContract<Connection> {

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

    @AfterAll
    void closePool() {
        pool.dispose();
    }
}
// end::contract-test[]
