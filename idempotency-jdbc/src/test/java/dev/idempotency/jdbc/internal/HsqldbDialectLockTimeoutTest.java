package dev.idempotency.jdbc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.jdbc.dialect.HsqldbDialect;
import dev.idempotency.jdbc.dialect.LockWait;
import dev.idempotency.testsupport.TestDatabases;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The HSQLDB dialect bounds a lock wait by cancelling the statement ({@link LockWait#CANCEL}); a
 * cancel that arrives after the statement ended is spent on a statement that does nothing, on
 * HSQLDB in MVCC mode through a HikariCP pool.
 */
class HsqldbDialectLockTimeoutTest {

    private static HikariDataSource pool;

    @BeforeAll
    static void createTable() throws SQLException {
        pool = TestDatabases.hsqldb("lock-timeout", 2);
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE effect (k VARCHAR(400) NOT NULL)");
        }
    }

    @AfterAll
    static void closePool() {
        pool.close();
    }

    /** Reaches the dialect's bounded execution, to place a cancel after the statement's end. */
    private static final class LateCancelProbe {
        private final JdbcExecutor executor = JdbcExecutor.of(new HsqldbDialect());

        int runThenIdle(PreparedStatement s, Duration timeout, long idleMillis) throws SQLException {
            return executor.withLockTimeout(s, timeout, () -> {
                int rows = s.executeUpdate();
                try {
                    Thread.sleep(idleMillis);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return rows;
            });
        }
    }

    @Test
    void aCancelThatArrivesAfterTheStatementEndedDoesNotAbortTheNextStatement() throws Exception {
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement s = c.prepareStatement("INSERT INTO effect (k) VALUES ('late cancel')")) {
                // The statement ends at once; the timer's cancel arrives while the execution idles.
                assertThat(new LateCancelProbe().runThenIdle(s, Duration.ofSeconds(1), 1_500)).isEqualTo(1);
            }
            assertThat(c.createStatement().executeUpdate("INSERT INTO effect (k) VALUES ('next')")).isEqualTo(1);
            c.rollback();
        }
    }

    @Test
    void withoutAbsorbingIt_aLateCancelWouldAbortTheNextStatement() throws Exception {
        // Documents why the dialect absorbs a late cancel: HSQLDB applies it to the next statement.
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement s = c.prepareStatement("INSERT INTO effect (k) VALUES ('x')")) {
                s.executeUpdate();
                s.cancel();
            }
            assertThatThrownBy(() -> c.createStatement().executeUpdate("INSERT INTO effect (k) VALUES ('y')"))
                    .isInstanceOf(SQLException.class).extracting(e -> ((SQLException) e).getSQLState()).isEqualTo("40502");
            c.rollback();
        }
    }
}
