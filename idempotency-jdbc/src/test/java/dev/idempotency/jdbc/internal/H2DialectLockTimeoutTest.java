package dev.idempotency.jdbc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.jdbc.dialect.H2Dialect;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The H2 dialect bounds a statement's lock wait by the policy's lock timeout to the millisecond, on
 * the embedded session itself, and gives the session its own value back afterwards.
 */
class H2DialectLockTimeoutTest {

    /** Reads the session's lock timeout from inside a statement run under a given lock timeout. */
    private static final class Probe {
        private final JdbcExecutor executor = JdbcExecutor.of(new H2Dialect());

        int lockTimeoutDuring(Connection c, Duration timeout) throws SQLException {
            try (PreparedStatement s = c.prepareStatement("SELECT LOCK_TIMEOUT()")) {
                return executor.withLockTimeout(s, timeout, () -> {
                    try (ResultSet rs = s.executeQuery()) {
                        rs.next();
                        return rs.getInt(1);
                    }
                });
            }
        }
    }

    private static int lockTimeout(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT LOCK_TIMEOUT()")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    @Test
    void theStatementWaitsForThePolicysMillisecondsAndTheSessionKeepsItsOwnTimeout() throws SQLException {
        try (Connection c = DriverManager.getConnection("jdbc:h2:mem:lock-timeout-probe;LOCK_TIMEOUT=2000")) {
            c.setAutoCommit(false);
            Probe probe = new Probe();
            assertThat(probe.lockTimeoutDuring(c, Duration.ofMillis(250))).isEqualTo(250);
            assertThat(probe.lockTimeoutDuring(c, Duration.ofMillis(12_345))).isEqualTo(12_345);
            assertThat(probe.lockTimeoutDuring(c, Duration.ZERO)).as("zero: no wait").isZero();
            assertThat(lockTimeout(c)).as("the session's own, restored").isEqualTo(2000);
            c.rollback();
        }
    }
}
