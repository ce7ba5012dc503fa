package dev.idempotency.jdbc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.jdbc.dialect.PostgresDialect;
import dev.idempotency.testsupport.TestDatabases;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.postgresql.jdbc.PgStatement;

/**
 * The PostgreSQL dialect bounds a statement's lock wait by the policy's lock timeout to the
 * millisecond (pgjdbc's query timeout in milliseconds, through a pool's proxy), and gives the
 * statement its own timeout back afterwards.
 */
class PostgresDialectLockTimeoutTest {

    /** Reads the statement's query timeout, in milliseconds, from inside a run under a given lock timeout. */
    private static final class Probe {
        private final JdbcExecutor executor = JdbcExecutor.of(new PostgresDialect());

        long queryTimeoutMsDuring(PreparedStatement s, Duration timeout) throws SQLException {
            return executor.withLockTimeout(s, timeout, () -> s.unwrap(PgStatement.class).getQueryTimeoutMs());
        }
    }

    @Test
    void theStatementIsCancelledAfterThePolicysMillisecondsAndKeepsItsOwnTimeout() throws SQLException {
        try (HikariDataSource pool = TestDatabases.postgres();
             Connection c = pool.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT 1")) {
            s.setQueryTimeout(7);
            Probe probe = new Probe();
            assertThat(probe.queryTimeoutMsDuring(s, Duration.ofMillis(250))).isEqualTo(250);
            assertThat(probe.queryTimeoutMsDuring(s, Duration.ofMillis(1_500))).isEqualTo(1_500);
            assertThat(probe.queryTimeoutMsDuring(s, Duration.ZERO)).as("zero: the shortest wait, not none").isEqualTo(1);
            assertThat(s.unwrap(PgStatement.class).getQueryTimeoutMs()).as("the statement's own, restored").isEqualTo(7_000);
        }
    }
}
