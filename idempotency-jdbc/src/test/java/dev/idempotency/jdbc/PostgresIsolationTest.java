package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.KeyPolicy;
import dev.idempotency.Outcome;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/** Isolation, time zones, lock timeout and cost on the PostgreSQL server of the environment. */
class PostgresIsolationTest extends AbstractIsolationTest {

    private HikariDataSource pool;

    @Override
    protected HikariDataSource dataSource() {
        if (pool == null) {
            pool = TestDatabases.postgres();
        }
        return pool;
    }

    /** PostgreSQL reports 40001 when the conflicting row is invisible to a transaction-wide snapshot. */
    @Override
    protected boolean staleSnapshotDuplicateConflicts(int isolation) {
        return isolation != Connection.TRANSACTION_READ_COMMITTED;
    }

    @Override
    protected String setSessionTimeZone() {
        return "SET TIME ZONE 'Asia/Kathmandu'";
    }

    @Override
    protected String showSessionTimeZone() {
        return "SHOW TIME ZONE";
    }

    @Override
    protected void setUnusualSessionSettings(Statement s) throws SQLException {
        s.execute("SET statement_timeout = '77s'; SET lock_timeout = '66s'");
    }

    @Override
    protected String sessionSettingsQuery() {
        return "SELECT current_setting('statement_timeout') AS statement_timeout, current_setting('lock_timeout') AS lock_timeout,"
                + " current_setting('TimeZone') AS time_zone";
    }

    /** The cancelled wait (57014) aborts the transaction. */
    @Override
    protected boolean transactionUsableAfterLockTimeout() {
        return false;
    }



    // ---- PostgreSQL only -------------------------------------------------------------------------

    /**
     * Cross-checks the counting wrapper with the wire: pgjdbc logs every Sync message it sends (one
     * per round trip) at FINEST. The {@code BEGIN} of a transaction travels with its first statement.
     */
    @Test
    void theWireCarriesOneRoundTripPerCountedStatement() throws Exception {
        Idempotency<Connection> engine = engine(KeyPolicy.ofDefaults());
        IdempotencyKey key = IdempotencyKey.of("iso", "round-trips");
        AtomicInteger syncs = new AtomicInteger();
        Thread me = Thread.currentThread();
        Logger pgjdbc = Logger.getLogger("org.postgresql");
        Level level = pgjdbc.getLevel();
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (Thread.currentThread() == me && r.getMessage() != null && r.getMessage().contains("FE=> Sync")) {
                    syncs.incrementAndGet();
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        handler.setLevel(Level.ALL);
        try (Connection c = dataSource().getConnection()) {
            c.setAutoCommit(false);
            engine.execute(IdempotencyKey.of("iso", "warm-up"), c, () -> "w");
            c.commit();
            pgjdbc.setLevel(Level.FINEST);
            pgjdbc.addHandler(handler);
            engine.execute(key, c, () -> "v");
            int first = syncs.getAndSet(0);
            c.commit();
            syncs.set(0);
            assertThat(engine.execute(key, c, () -> "not run").status()).isEqualTo(Outcome.Status.REPLAYED);
            int replay = syncs.getAndSet(0);
            c.commit();
            System.out.printf("PostgreSQL wire (Sync messages): a first execution costs %d round trips, a replay %d%n", first, replay);
            assertThat(first).isEqualTo(PostgresStoreTest.STATEMENTS_PER_FIRST_EXECUTION);
            assertThat(replay).isEqualTo(PostgresStoreTest.STATEMENTS_PER_REPLAY);
        } finally {
            pgjdbc.removeHandler(handler);
            pgjdbc.setLevel(level);
        }
    }
}
