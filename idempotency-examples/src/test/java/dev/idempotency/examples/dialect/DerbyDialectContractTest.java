package dev.idempotency.examples.dialect;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.jdbc.dialect.TableName;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.testkit.IdempotencyStoreContract;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

/**
 * The testkit's whole contract (leases and chunks included) on {@link DerbyDialect}, a dialect from
 * outside the library, on an embedded in-memory Apache Derby. Two tests are disabled: they go on in
 * the waiter's transaction after its lock wait ran out, which Derby's 40XL1 rolls back whole.
 */
class DerbyDialectContractTest extends IdempotencyStoreContract<Connection> {

    private static final String URL = "jdbc:derby:memory:derby-dialect";

    static {
        // Derby's log goes to the build's directory, not to the working directory.
        System.setProperty("derby.stream.error.file", "target/derby.log");
    }

    private final JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().dialect(new DerbyDialect()).build();

    // tag::create[]
    @Override
    protected IdempotencyStore<Connection> createStore(InstantSource clock) throws SQLException {
        try (Connection c = DriverManager.getConnection(URL + ";create=true"); Statement s = c.createStatement()) {
            // Derby has no CREATE TABLE IF NOT EXISTS: the DDL runs where the table is missing.
            if (!tableExists(c, store.table())) {
                store.createTableIfMissing(c);
            }
            // Lock waits end after the contract's lock timeout (10 s), deadlocks are found after 1 s.
            s.execute("CALL SYSCS_UTIL.SYSCS_SET_DATABASE_PROPERTY('derby.locks.waitTimeout', '10')");
            s.execute("CALL SYSCS_UTIL.SYSCS_SET_DATABASE_PROPERTY('derby.locks.deadlockTimeout', '1')");
        }
        return store;
    }
    // end::create[]

    private static boolean tableExists(Connection c, TableName table) throws SQLException {
        try (ResultSet rs = c.getMetaData().getTables(null, null, table.simpleName().toUpperCase(Locale.ROOT), null)) {
            return rs.next();
        }
    }

    @Override
    protected Connection begin() throws SQLException {
        Connection c = DriverManager.getConnection(URL);
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

    /** Empties both tables between tests. */
    @Override
    protected void reset() throws SQLException {
        TableName table = store.table();
        try (Connection c = DriverManager.getConnection(URL); Statement s = c.createStatement()) {
            s.executeUpdate("DELETE FROM " + table);
            s.executeUpdate("DELETE FROM " + table.pending());
        }
    }

    /** A connection in auto-commit mode, a closed one, and a read-only one if Derby honours it. */
    @Override
    protected List<UnusableTransaction<Connection>> unusableTransactions() throws SQLException {
        Connection autoCommit = DriverManager.getConnection(URL);
        Connection closed = DriverManager.getConnection(URL);
        closed.close();
        List<UnusableTransaction<Connection>> unusable = new ArrayList<>(List.of(
                new UnusableTransaction<>("a connection in auto-commit mode", autoCommit, autoCommit),
                new UnusableTransaction<>("a closed connection", closed, null)));
        Connection readOnly = DriverManager.getConnection(URL);
        readOnly.setAutoCommit(false);
        readOnly.setReadOnly(true);
        if (readOnly.isReadOnly()) {
            unusable.add(new UnusableTransaction<>("a read-only connection", readOnly, readOnly));
        } else {
            readOnly.close();
        }
        return unusable;
    }

    @Test
    void theDdlComesFromThisProjectsResources() throws SQLException {
        try (Connection c = DriverManager.getConnection(URL)) {
            assertThat(store.ddl(c)).contains("described from outside the library").contains("CREATE TABLE " + store.table());
        }
    }

    @Override
    @Test
    @Disabled("Derby's lock timeout (40XL1) rolls back the waiter's whole transaction, so the waiter cannot"
            + " answer InProgress and go on in it; DerbyDialect reports a retryable transaction conflict instead")
    public void concurrentHolderPastTheLockTimeoutGivesInProgress() {
    }

    @Override
    @Test
    @Disabled("Derby's lock timeout (40XL1) rolls back the whole transaction, so a chunk cannot answer InProgress"
            + " for the held key and commit the rest; DerbyDialect reports a retryable transaction conflict instead")
    public void chunkWithAKeyHeldPastTheLockTimeoutAnswersInProgressForItAndCommitsTheRest() {
    }

    @AfterAll
    void dropDatabase() {
        try {
            DriverManager.getConnection(URL + ";drop=true").close();
        } catch (SQLException dropped) {
            // Derby reports a dropped database with an exception (08006).
        }
    }
}
