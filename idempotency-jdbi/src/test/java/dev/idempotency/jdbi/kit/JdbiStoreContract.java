package dev.idempotency.jdbi.kit;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.jdbi.JdbiIdempotencyStore;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.testkit.IdempotencyStoreContract;
import java.time.InstantSource;
import java.util.List;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterAll;

/**
 * The testkit's contract through the Jdbi adapter: a transaction is a Jdbi {@link Handle} on which
 * {@code begin()} was called, committed or rolled back and then closed.
 */
abstract class JdbiStoreContract extends IdempotencyStoreContract<Handle> {

    static final String TABLE = "idempotency_kit_jdbi";

    private HikariDataSource pool;
    private Jdbi jdbi;

    /** @return a pool on the database under test, with at least 10 connections */
    abstract HikariDataSource createPool() throws Exception;


    @Override
    protected IdempotencyStore<Handle> createStore(InstantSource clock) throws Exception {
        pool = createPool();
        jdbi = Jdbi.create(pool);
        JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().table(TABLE).build();
        store.createTableIfMissing(pool);
        return JdbiIdempotencyStore.of(store);
    }

    @Override
    protected Handle begin() {
        return jdbi.open().begin();
    }

    @Override
    protected void commit(Handle tx) {
        try (tx) {
            tx.commit();
        }
    }

    @Override
    protected void rollback(Handle tx) {
        try (tx) {
            tx.rollback();
        }
    }

    /** A handle outside a transaction, and a closed one. */
    @Override
    protected List<UnusableTransaction<Handle>> unusableTransactions() {
        Handle outside = jdbi.open();
        Handle closed = jdbi.open().begin();
        closed.rollback();
        closed.close();
        return List.of(new UnusableTransaction<>("a Jdbi handle outside a transaction", outside, outside),
                new UnusableTransaction<>("a closed Jdbi handle", closed, null));
    }

    @Override
    protected void reset() {
        jdbi.useHandle(h -> {
            h.execute("DELETE FROM " + TABLE);
            h.execute("DELETE FROM " + TABLE + "_pending");
        });
    }

    @AfterAll
    void closePool() {
        if (pool != null) {
            pool.close();
        }
    }
}
