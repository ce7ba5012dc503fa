package dev.idempotency.jdbc.kit;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.jdbc.dialect.SqlDialect;
import dev.idempotency.jdbc.dialect.TableName;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.testkit.IdempotencyStoreContract;
import dev.idempotency.testsupport.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;

/**
 * The testkit's contract on {@link JdbcIdempotencyStore}, through the hooks any store author
 * answers: a transaction is a pooled connection with auto-commit off, committed or rolled back and
 * then closed. Each database's test class runs it in a nested class ({@code HsqldbTest.Contract},
 * ...) that names its {@link TestDatabase}: the pool, and the dialect if it is not the detected one.
 */
public abstract class JdbcStoreContract extends IdempotencyStoreContract<Connection> {

    /** The table of the store under test unless {@link #configure} changes it. */
    protected static final String TABLE = "idempotency_kit";

    private final TestDatabase database;

    private HikariDataSource pool;

    /** The table of the store under test, which {@link #configure} may have changed. */
    private TableName table;

    /** @param database the database under test */
    protected JdbcStoreContract(TestDatabase database) {
        this.database = database;
    }

    /** @return a pool on the database under test, with at least 10 connections */
    protected HikariDataSource createPool() throws Exception {
        return database.pool("kit", 16);
    }

    /**
     * @param store a builder on {@link #TABLE}, with the database's dialect if it names one
     * @return the builder of the store under test
     */
    protected JdbcIdempotencyStore.Builder configure(JdbcIdempotencyStore.Builder store) {
        return store;
    }


    @Override
    protected IdempotencyStore<Connection> createStore(InstantSource clock) throws Exception {
        pool = createPool();
        JdbcIdempotencyStore.Builder builder = JdbcIdempotencyStore.builder().table(TABLE);
        if (database.dialectClass() != null) {
            builder.dialect(dialect(database));
        }
        JdbcIdempotencyStore store = configure(builder).build();
        store.createTableIfMissing(pool);
        table = store.table();
        return store;
    }

    @Override
    protected Connection begin() throws Exception {
        Connection c = pool.getConnection();
        c.setAutoCommit(false);
        return c;
    }

    @Override
    protected void commit(Connection tx) throws Exception {
        try (tx) {
            tx.commit();
        }
    }

    @Override
    protected void rollback(Connection tx) throws Exception {
        try (tx) {
            tx.rollback();
        }
    }

    /**
     * A connection in auto-commit mode, a closed one, and a read-only one where the driver lets a
     * pooled connection become read-only and then reports it (not SQLite's, which refuses the
     * change; not H2's through its own pool, which ignores {@code setReadOnly(true)}, stays writable
     * and reports {@code isReadOnly()} false, so that the store rightly accepts it); each is closed,
     * given back, afterwards.
     */
    @Override
    protected List<UnusableTransaction<Connection>> unusableTransactions() throws Exception {
        List<UnusableTransaction<Connection>> unusable = new ArrayList<>();
        Connection autoCommit = pool.getConnection();
        autoCommit.setAutoCommit(true);
        unusable.add(new UnusableTransaction<>("a connection in auto-commit mode", autoCommit, autoCommit));
        Connection closed = pool.getConnection();
        closed.close();
        unusable.add(new UnusableTransaction<>("a closed connection", closed, null));
        Connection readOnly = pool.getConnection();
        try {
            readOnly.setAutoCommit(false);
            readOnly.setReadOnly(true);
        } catch (SQLException e) {
            readOnly.close();
            return unusable;
        }
        if (!readOnly.isReadOnly()) {
            readOnly.close();
            return unusable;
        }
        unusable.add(new UnusableTransaction<>("a read-only connection", readOnly, () -> {
            try (readOnly) {
                readOnly.rollback();
            }
        }));
        return unusable;
    }

    @Override
    protected void reset() throws Exception {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(true);
            s.executeUpdate("DELETE FROM " + table);
            s.executeUpdate("DELETE FROM " + table.pending());
        }
    }

    /**
     * @param database a database that names its dialect
     * @return a new instance of that dialect
     */
    static SqlDialect dialect(TestDatabase database) {
        try {
            return Class.forName(database.dialectClass()).asSubclass(SqlDialect.class).getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException | ClassCastException e) {
            throw new IllegalStateException("cannot create the dialect " + database.dialectClass() + " of " + database
                    + ": it must be a SqlDialect with a public constructor without parameters", e);
        }
    }

    @AfterAll
    void closePool() {
        if (pool != null) {
            pool.close();
        }
    }
}
