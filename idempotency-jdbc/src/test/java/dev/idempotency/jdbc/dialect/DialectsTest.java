package dev.idempotency.jdbc.dialect;

import static dev.idempotency.jdbc.internal.JdbcExecutor.error;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.jdbc.internal.JdbcExecutor;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Which dialect a database gets, how a lock timeout becomes a query timeout, and which failures are conflicts. */
class DialectsTest {

    @Test
    void everySupportedProductNameGetsItsDialect() {
        assertThat(Dialects.forProduct("H2", "2.3")).isInstanceOf(H2Dialect.class);
        assertThat(Dialects.forProduct("PostgreSQL", "16.1")).isInstanceOf(PostgresDialect.class);
        assertThat(Dialects.forProduct("MariaDB", "10.11")).isInstanceOf(MariaDbDialect.class);
        assertThat(Dialects.forProduct("MySQL", "8.0")).isInstanceOf(MariaDbDialect.class);
        assertThat(Dialects.forProduct("SQLite", "3.45")).isInstanceOf(SqliteDialect.class);
        assertThat(Dialects.forProduct("HSQL Database Engine", "2.7")).isInstanceOf(HsqldbDialect.class);
        assertThat(Dialects.forProduct("postgresql", "16.1")).as("letter case does not matter").isInstanceOf(PostgresDialect.class);
    }

    @Test
    void anUnknownProductIsRefusedNamingItAndTheWayOut() {
        assertThatThrownBy(() -> Dialects.forProduct("Oracle", "23ai")).isInstanceOf(Dialects.UnsupportedDatabaseException.class)
                .hasMessageContaining("'Oracle'").hasMessageContaining("'23ai'").hasMessageContaining("builder().dialect(");
        assertThatThrownBy(() -> Dialects.forProduct(null, null)).isInstanceOf(Dialects.UnsupportedDatabaseException.class);
        assertThatThrownBy(() -> Dialects.forProduct("H2 Compatible", "1")).isInstanceOf(Dialects.UnsupportedDatabaseException.class);
    }

    @Test
    void detectReadsTheConnectionsMetadataAndKeepsTheAnswer() throws SQLException {
        try (Connection h2 = DriverManager.getConnection("jdbc:h2:mem:dialects-detect");
                Connection hsqldb = DriverManager.getConnection("jdbc:hsqldb:mem:dialects-detect", "SA", "");
                Connection sqlite = DriverManager.getConnection("jdbc:sqlite::memory:")) {
            assertThat(Dialects.detect(h2)).isInstanceOf(H2Dialect.class).isSameAs(Dialects.detect(h2));
            assertThat(Dialects.detect(hsqldb)).isInstanceOf(HsqldbDialect.class);
            assertThat(Dialects.detect(sqlite)).isInstanceOf(SqliteDialect.class);
        }
    }

    /**
     * JDBC query timeouts are whole seconds and zero means none: where a dialect has no finer way (here
     * the PostgreSQL dialect on a statement that is not pgjdbc's), a lock timeout is rounded up, to at
     * least one second, and the statement's previous timeout is set back afterwards.
     */
    @Test
    void theLockTimeoutIsRoundedUpToWholeSecondsAndTheStatementsOwnIsRestored() throws SQLException {
        SqlDialect dialect = new PostgresDialect();
        try (Connection c = DriverManager.getConnection("jdbc:h2:mem:dialects-timeout"); PreparedStatement s = c.prepareStatement("VALUES 1")) {
            s.setQueryTimeout(7);
            assertThat(queryTimeoutWhileRunning(dialect, s, Duration.ZERO)).isEqualTo(1);
            assertThat(queryTimeoutWhileRunning(dialect, s, Duration.ofMillis(200))).isEqualTo(1);
            assertThat(queryTimeoutWhileRunning(dialect, s, Duration.ofMillis(1000))).isEqualTo(1);
            assertThat(queryTimeoutWhileRunning(dialect, s, Duration.ofMillis(1001))).isEqualTo(2);
            assertThat(queryTimeoutWhileRunning(dialect, s, Duration.ofMillis(2999))).isEqualTo(3);
            assertThat(s.getQueryTimeout()).isEqualTo(7);
        }
    }

    private static int queryTimeoutWhileRunning(SqlDialect dialect, PreparedStatement s, Duration timeout) throws SQLException {
        int during = JdbcExecutor.of(dialect).withLockTimeout(s, timeout, s::getQueryTimeout);
        assertThat(s.getQueryTimeout()).as("restored after %s", timeout).isEqualTo(7);
        return during;
    }

    /**
     * HSQLDB reports a cancelled lock wait with SQLState 40502, in the class of conflicts: it is a lock
     * timeout (the key stays in progress), never a conflict that a retry of the whole transaction
     * would resolve. A real duplicate key or missing table is neither.
     */
    @Test
    void hsqldbTellsLockTimeoutsConflictsAndOtherFailuresApart() throws SQLException {
        HsqldbDialect dialect = new HsqldbDialect();
        SQLException cancelled = new SQLException("statement execution aborted", "40502");
        assertThat(dialect.isLockTimeout(error(cancelled))).isTrue();
        assertThat(dialect.isTransactionConflict(error(cancelled))).isFalse();
        SQLException serialization = new SQLException("transaction rollback: serialization failure", "40001");
        assertThat(dialect.isTransactionConflict(error(serialization))).isTrue();
        assertThat(dialect.isLockTimeout(error(serialization))).isFalse();
        try (Connection c = DriverManager.getConnection("jdbc:hsqldb:mem:dialects-errors-" + java.util.UUID.randomUUID(), "SA", ""); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE t (k INT PRIMARY KEY)");
            s.execute("INSERT INTO t VALUES 1");
            SQLException duplicate = failure(() -> s.execute("INSERT INTO t VALUES 1"));
            assertThat(dialect.isDuplicateKey(error(duplicate))).isTrue();
            assertThat(dialect.isTransactionConflict(error(duplicate))).isFalse();
            assertThat(dialect.isLockTimeout(error(duplicate))).isFalse();
            SQLException missing = failure(() -> s.execute("SELECT * FROM no_such_table"));
            assertThat(dialect.isMissingTable(error(missing))).isTrue();
            assertThat(dialect.isTransactionConflict(error(missing))).isFalse();
        }
    }

    /**
     * H2 at READ UNCOMMITTED can meet a row in the key's index that a concurrent rollback has just
     * removed from the table (90143, seen by the isolation suite's duplicates at that level): a
     * conflict that a retry of the transaction resolves, where the other dialects know no such state.
     */
    @Test
    void h2TakesARowThatARollbackRemovedUnderItsReadForAConflict() {
        SQLException vanished = new SQLException("Row \"1\" not found in primary index \"PUBLIC.IDEMPOTENCY_RECORD.tableScan\"",
                "90143", 90143);
        assertThat(new H2Dialect().isTransactionConflict(error(vanished))).isTrue();
        assertThat(new H2Dialect().isLockTimeout(error(vanished))).isFalse();
        assertThat(new HsqldbDialect().isTransactionConflict(error(vanished))).isFalse();
    }

    /** A statement expected to fail. */
    interface Failing {
        void run() throws SQLException;
    }

    /** @return the failure of {@code statement}, which must fail */
    static SQLException failure(Failing statement) {
        try {
            statement.run();
        } catch (SQLException e) {
            return e;
        }
        throw new AssertionError("the statement was expected to fail");
    }
}
