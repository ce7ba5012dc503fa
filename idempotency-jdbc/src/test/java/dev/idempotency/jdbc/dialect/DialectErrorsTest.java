package dev.idempotency.jdbc.dialect;

import static dev.idempotency.jdbc.dialect.DialectsTest.failure;
import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.jdbc.internal.JdbcExecutor;
import dev.idempotency.testsupport.TestDatabases;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each dialect tells the database's own failures apart, read from the database itself: a duplicate
 * key, a read-only transaction or database, a missing table. A failure taken for the wrong kind
 * misleads the caller: a duplicate key taken for a conflict is retried forever, a read-only
 * refusal taken for a duplicate key is answered as another caller's claim.
 */
class DialectErrorsTest {

    @Test
    void sqliteNamesDuplicateKeysReadOnlyDatabasesAndMissingTables(@TempDir Path dir) throws SQLException {
        SqlDialect dialect = new SqliteDialect();
        String url = "jdbc:sqlite:" + dir.resolve("errors.db");
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, u TEXT UNIQUE)");
            s.execute("INSERT INTO t VALUES (1, 'a')");
            SQLException primaryKey = failure(() -> s.execute("INSERT INTO t VALUES (1, 'b')"));
            assertOnly(dialect, primaryKey, Kind.DUPLICATE_KEY);
            SQLException unique = failure(() -> s.execute("INSERT INTO t VALUES (2, 'a')"));
            assertOnly(dialect, unique, Kind.DUPLICATE_KEY);
            SQLException missing = failure(() -> s.execute("SELECT * FROM no_such_table"));
            assertOnly(dialect, missing, Kind.MISSING_TABLE);
        }
        org.sqlite.SQLiteConfig readOnly = new org.sqlite.SQLiteConfig();
        readOnly.setReadOnly(true);
        try (Connection c = readOnly.createConnection(url); Statement s = c.createStatement()) {
            SQLException refused = failure(() -> s.execute("INSERT INTO t VALUES (3, 'c')"));
            assertOnly(dialect, refused, Kind.READ_ONLY);
        }
        assertOnly(dialect, new SQLException("a message without a result code"), null);
    }

    @Test
    void mariadbNamesDuplicateKeysReadOnlyTransactionsAndMissingTables() throws SQLException {
        SqlDialect dialect = new MariaDbDialect();
        try (HikariDataSource pool = TestDatabases.mariadb(); Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS dialect_errors (k INT PRIMARY KEY)");
            s.execute("DELETE FROM dialect_errors");
            s.execute("INSERT INTO dialect_errors VALUES (1)");
            SQLException duplicate = failure(() -> s.execute("INSERT INTO dialect_errors VALUES (1)"));
            assertThat(duplicate.getErrorCode()).isEqualTo(1062);
            assertOnly(dialect, duplicate, Kind.DUPLICATE_KEY);
            SQLException missing = failure(() -> s.execute("SELECT * FROM no_such_table"));
            assertOnly(dialect, missing, Kind.MISSING_TABLE);
            s.execute("START TRANSACTION READ ONLY");
            SQLException readOnly = failure(() -> s.execute("INSERT INTO dialect_errors VALUES (2)"));
            s.execute("ROLLBACK");
            assertThat(readOnly.getErrorCode()).isEqualTo(1792);
            assertOnly(dialect, readOnly, Kind.READ_ONLY);
            s.execute("DROP TABLE dialect_errors");
        }
        // 1020, "Record has changed since last read": another transaction's commit, which a retry resolves.
        assertOnly(dialect, new SQLException("Record has changed since last read in table 't'", "HY000", 1020), Kind.CONFLICT);
        // 1290 names a read-only server only with --read-only; other options prevent statements too.
        assertOnly(dialect, new SQLException("The MariaDB server is running with the --read-only option so it cannot execute this"
                + " statement", "HY000", 1290), Kind.READ_ONLY);
        assertOnly(dialect, new SQLException("The MariaDB server is running with the --secure-file-priv option so it cannot"
                + " execute this statement", "HY000", 1290), null);
    }

    private enum Kind {
        DUPLICATE_KEY, CONFLICT, READ_ONLY, MISSING_TABLE
    }

    /** Asserts that the dialect takes {@code e} for {@code kind} and for no other kind ({@code null}: for none). */
    private static void assertOnly(SqlDialect dialect, SQLException failure, Kind kind) {
        SqlError error = JdbcExecutor.error(failure);
        String what = failure.getMessage() + " (SQLState " + failure.getSQLState() + ", code " + failure.getErrorCode() + ")";
        assertThat(dialect.isDuplicateKey(error)).as("duplicate key: %s", what).isEqualTo(kind == Kind.DUPLICATE_KEY);
        assertThat(dialect.isTransactionConflict(error)).as("transaction conflict: %s", what).isEqualTo(kind == Kind.CONFLICT);
        assertThat(dialect.isReadOnly(error)).as("read-only: %s", what).isEqualTo(kind == Kind.READ_ONLY);
        assertThat(dialect.isMissingTable(error)).as("missing table: %s", what).isEqualTo(kind == Kind.MISSING_TABLE);
        assertThat(dialect.isLockTimeout(error)).as("lock timeout: %s", what).isFalse();
    }
}
