package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Fingerprint;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.KeyPolicy;
import dev.idempotency.Outcome;
import dev.idempotency.jdbc.kit.JdbcStoreContract;
import dev.idempotency.jdbc.lease.AbstractLeaseModeTest;
import dev.idempotency.jdbc.lease.AbstractRecoveryWorkerTest;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.testsupport.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.h2.jdbcx.JdbcConnectionPool;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** Every shared suite on embedded H2 ({@link TestDatabase#H2}), and what is H2's alone. */
class H2Test {

    static final TestDatabase DB = TestDatabase.H2;

    /** What only a JDBC store can break ({@link AbstractJdbcStoreTest}), and a record it did not write. */
    @Nested
    class Store extends AbstractJdbcStoreTest {
        Store() {
            super(DB);
        }

        /**
         * A record that this library did not write (a row made by hand, whose fingerprint and status
         * are none of the library's) fails a claim, a chunk's claim and a lease claim with the store's
         * failure naming it, not with the parse's own exception.
         */
        @Test
        void aRecordThisLibraryDidNotWriteIsNamedAsSuch() throws Exception {
            IdempotencyKey key = IdempotencyKey.of("hand", "made");
            Tx.commit(dataSource(), c -> {
                try (Statement s = c.createStatement()) {
                    return s.executeUpdate("INSERT INTO " + store.table() + " (scope, key_id, fingerprint, status, created_at,"
                            + " expires_at) VALUES ('hand', 'made', 'f', 'NONE', 0, " + Long.MAX_VALUE + ")");
                }
            });
            ClaimRequest r = new ClaimRequest(key, Fingerprint.of("r"), START, START.plusSeconds(60), Duration.ofSeconds(1));
            String did = "in table '" + store.table() + "' holds a value this library did not write";
            assertThatThrownBy(() -> Tx.rollback(dataSource(), c -> store.claim(c, r)))
                    .isInstanceOf(IdempotencyStoreException.class).hasMessageContaining("the key's record " + did);
            assertThatThrownBy(() -> Tx.rollback(dataSource(), c -> store.claimAll(c, List.of(r))))
                    .isInstanceOf(IdempotencyStoreException.class).hasMessageContaining("a record of the chunk " + did);
            assertThatThrownBy(() -> Tx.rollback(dataSource(), c -> store.claimLease(c, new LeaseRequest(key, Fingerprint.of("r"),
                    "token", Duration.ofSeconds(60), Duration.ofDays(1), Duration.ofSeconds(1)))))
                    .isInstanceOf(IdempotencyStoreException.class).hasMessageContaining("the key's record " + did);
        }
    }

    /** Chunks of a batch job ({@link AbstractChunkTest}). */
    @Nested
    class Chunks extends AbstractChunkTest {
        Chunks() {
            super(DB);
        }
    }

    /**
     * Isolation levels, session settings, lock waits and costs ({@link AbstractIsolationTest}), and H2's
     * own lock timeout.
     */
    @Nested
    class Isolation extends AbstractIsolationTest {
        Isolation() {
            super(DB);
        }

        /** H2's REPEATABLE READ lets other transactions' new rows appear (phantoms); SERIALIZABLE does not. */
        @Override
        protected boolean staleSnapshotDuplicateConflicts(int isolation) {
            return isolation == Connection.TRANSACTION_SERIALIZABLE;
        }

        /**
         * Once this transaction has read the key's absence at REPEATABLE READ, H2 keeps showing it
         * absent, so a claim that waited for a concurrent one is a conflict there too.
         */
        @Override
        protected boolean waitedDuplicateConflicts(int isolation) {
            return isolation >= Connection.TRANSACTION_REPEATABLE_READ;
        }

        @Override
        protected String setSessionTimeZone() {
            return "SET TIME ZONE 'Asia/Kathmandu'";
        }

        @Override
        protected String showSessionTimeZone() {
            return "SELECT SETTING_VALUE FROM INFORMATION_SCHEMA.SETTINGS WHERE SETTING_NAME = 'TIME ZONE'";
        }

        /**
         * H2's query timeout is a session setting, shared by every statement of the connection; its
         * driver caches it, so it is set here through JDBC (a value set with SQL would be invisible to
         * {@code getQueryTimeout}, and so could not be restored).
         */
        @Override
        protected void setUnusualSessionSettings(Statement s) throws SQLException {
            s.setQueryTimeout(77);
            s.execute("SET LOCK_TIMEOUT 6666");
        }

        @Override
        protected String sessionSettingsQuery() {
            return "SELECT (SELECT SETTING_VALUE FROM INFORMATION_SCHEMA.SETTINGS WHERE SETTING_NAME = 'QUERY_TIMEOUT') AS QUERY_TIMEOUT,"
                    + " LOCK_TIMEOUT() AS LOCK_TIMEOUT, (SELECT SETTING_VALUE FROM INFORMATION_SCHEMA.SETTINGS WHERE SETTING_NAME = 'TIME ZONE') AS TIME_ZONE";
        }

        /**
         * H2's own {@code LOCK_TIMEOUT} (here 300 ms, set on the waiter's session) no longer cuts the
         * policy's wait short: the waiter waits for the holder, which commits after about a second, and
         * replays its result instead of giving {@code InProgress} after 300 ms. The session's own lock
         * timeout is as it was afterwards.
         */
        @Test
        void thePolicysLockTimeoutIsHonouredWhenH2sOwnIsShorter() throws Exception {
            Connection waiter = dataSource().getConnection();
            try {
                waitsPastH2sOwnLockTimeout(IdempotencyKey.of("iso", "h2-lock-timeout"), dataSource().getConnection(), waiter);
            } finally {
                closeAndEvict(waiter);
            }
        }

        /**
         * The same through H2's own pool, {@code JdbcConnectionPool}, whose connections are a subclass of
         * H2's connection that {@code unwrap} returns as itself: the policy's wait holds there too.
         */
        @Test
        void thePolicysLockTimeoutIsHonouredThroughH2sOwnPool() throws Exception {
            JdbcConnectionPool h2Pool = JdbcConnectionPool.create("jdbc:h2:mem:isolation", "", "");
            try {
                waitsPastH2sOwnLockTimeout(IdempotencyKey.of("iso", "h2-own-pool"), h2Pool.getConnection(), h2Pool.getConnection());
            } finally {
                h2Pool.dispose();
            }
        }

        private void waitsPastH2sOwnLockTimeout(IdempotencyKey key, Connection holderConnection, Connection waiter) throws Exception {
            Idempotency<Connection> patient = engine(KeyPolicy.builder().lockTimeout(Duration.ofSeconds(20)).build());
            try (Connection holder = holderConnection) {
                holder.setAutoCommit(false);
                assertThat(patient.execute(key, holder, () -> work(holder, key)).isExecuted()).isTrue();
                try (Statement s = waiter.createStatement()) {
                    s.execute("SET LOCK_TIMEOUT 300");
                }
                waiter.setAutoCommit(false);
                CompletableFuture<Void> commitLater = CompletableFuture.runAsync(() -> {
                    try {
                        holder.commit();
                    } catch (SQLException e) {
                        throw new IllegalStateException(e);
                    }
                }, CompletableFuture.delayedExecutor(1, TimeUnit.SECONDS));

                Outcome<String> o = patient.execute(key, waiter, () -> work(waiter, key));
                waiter.commit();
                commitLater.get(30, TimeUnit.SECONDS);

                assertThat(o.status()).as("waited past H2's 300 ms for the holder's commit").isEqualTo(Outcome.Status.REPLAYED);
                try (Statement s = waiter.createStatement(); ResultSet rs = s.executeQuery("SELECT LOCK_TIMEOUT()")) {
                    rs.next();
                    assertThat(rs.getInt(1)).as("the session's own lock timeout, restored").isEqualTo(300);
                }
            }
            assertThat(executions).hasValue(1);
        }
    }

    /** Write-last mode ({@link AbstractWriteLastTest}). */
    @Nested
    class WriteLast extends AbstractWriteLastTest {
        WriteLast() {
            super(DB);
        }
    }

    /** The testkit's contract ({@link JdbcStoreContract}). */
    @Nested
    class Contract extends JdbcStoreContract {
        Contract() {
            super(DB);
        }
    }

    /** Lease mode and recovery phases ({@link AbstractLeaseModeTest}). */
    @Nested
    class LeaseMode extends AbstractLeaseModeTest {
        LeaseMode() {
            super(DB);
        }
    }

    /** The recovery worker ({@link AbstractRecoveryWorkerTest}). */
    @Nested
    class RecoveryWorker extends AbstractRecoveryWorkerTest {
        RecoveryWorker() {
            super(DB);
        }
    }
}
