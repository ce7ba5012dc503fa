package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.KeyPolicy;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.ResultTooLargeException;
import dev.idempotency.testsupport.LazyPool;
import dev.idempotency.testsupport.TestDatabases;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** The store contract on the MariaDB server of the environment. */
class MariaDbStoreTest extends AbstractJdbcStoreTest {

    private final LazyPool pool = new LazyPool(TestDatabases::mariadb);

    @Override
    protected DataSource dataSource() {
        return pool.get();
    }

    /** Statements of a first execution, as the dialect's Javadoc states: SELECT, INSERT ... ON DUPLICATE KEY UPDATE, the completing UPDATE; a replay, one SELECT. */
    static final int STATEMENTS_PER_FIRST_EXECUTION = 3;
    /** Statements of a replay, as the dialect's Javadoc states. */
    static final int STATEMENTS_PER_REPLAY = 1;

    @Override
    protected int statementsPerFirstExecution() {
        return STATEMENTS_PER_FIRST_EXECUTION;
    }

    @Override
    protected int statementsPerReplay() {
        return STATEMENTS_PER_REPLAY;
    }

    @Override
    protected boolean transactionUsableAfterLockTimeout() {
        return true;
    }

    @Override
    protected void closeDataSource() {
        pool.close();
    }

    /** The server's default {@code max_allowed_packet}, and the policy's limit of the tests that reach it. */
    private static final int SIXTEEN_MIB = 16 * 1024 * 1024;

    /** Lease and write-last modes, whose policy accepts results (and recovery points) up to 16 MiB. */
    private ManagedIdempotency<Connection> managedUpTo16MiB() {
        return ManagedIdempotency.builder(engine(KeyPolicy.builder().maxResultBytes(SIXTEEN_MIB).build()),
                JdbcTransactions.of(dataSource())).build();
    }

    /**
     * The policy accepts results up to 16 MiB; the server's default {@code max_allowed_packet} is
     * 16 MiB, so the statement that records a 16 MiB result is too large, and sending it would drop
     * the connection. It is refused before it is sent; a result that fits, even one that escaping
     * makes larger on the wire, is recorded.
     */
    @Test
    void aResultOverTheServersPacketLimitIsRefusedBeforeItIsSentAndTheConnectionSurvives() throws Exception {
        int sixteenMiB = 16 * 1024 * 1024;
        Idempotency<Connection> generous = engine(KeyPolicy.builder().maxResultBytes(sixteenMiB).build());
        long packet;
        try (Connection c = dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT @@max_allowed_packet")) {
            rs.next();
            packet = rs.getLong(1);
        }
        assertThat(packet).as("the test server's max_allowed_packet (its default)").isLessThanOrEqualTo(sixteenMiB);
        IdempotencyKey key = key("over-the-packet");
        IdempotencyKey quoted = key("quotes-over-the-packet");
        try (Connection c = dataSource().getConnection()) {
            c.setAutoCommit(false);
            assertThatThrownBy(() -> generous.execute(key, c, () -> {
                work(c, key);
                return "x".repeat(sixteenMiB);
            })).isInstanceOf(ResultTooLargeException.class).isInstanceOf(ResultOverPacketLimitException.class)
                    .hasMessageContaining("max_allowed_packet of " + packet + " bytes")
                    .hasMessageContaining("nothing was sent")
                    .satisfies(e -> assertThat(((ResultTooLargeException) e).size()).isEqualTo(sixteenMiB))
                    .satisfies(e -> {
                        ResultOverPacketLimitException over = (ResultOverPacketLimitException) e;
                        assertThat(over.packetLimit()).isEqualTo(packet);
                        assertThat(over.limit()).isEqualTo((int) packet);
                        assertThat(over.statementBytes()).as("the documented bound: 1,024 bytes, the key and codec twice, the result")
                                .isEqualTo(1024L + 2L * (key.scope().length() + key.id().length()
                                        + dev.idempotency.ResultCodec.string().name().length()) + sixteenMiB);
                        assertThat(over.getMessage()).as("names the key").contains(key.id())
                                .contains("up to " + over.statementBytes() + " bytes");
                    });
            String quotes = "'".repeat(sixteenMiB / 2 + 1); // within the packet as bytes, over it once escaped
            assertThatThrownBy(() -> generous.execute(quoted, c, () -> quotes)).isInstanceOf(ResultOverPacketLimitException.class);
            assertThat(c.isValid(2)).as("the connection survives").isTrue();
            c.rollback();
            Outcome<String> retry = generous.execute(key, c, () -> "x".repeat(sixteenMiB / 2));
            c.commit();
            assertThat(retry.isExecuted()).isTrue();
        }
        assertThat(effects()).as("the refused attempt's work was rolled back").isZero();
        assertThat(Tx.commit(dataSource(), c -> generous.execute(key, c, () -> "not run")).value()).hasSize(sixteenMiB / 2);
        assertThat(records()).isEqualTo(1);
    }

    /**
     * Lease mode meets the same limit after the call has run: the completion over
     * {@code max_allowed_packet} is refused before it is sent (sending it would drop the connection
     * and leave the lease to end, and a retry to run the call again), and the engine records the
     * operation as failed, as for a result over the policy's limit: every retry gets that failure
     * back, and the call is not run again.
     */
    @Test
    void aLeasedResultOverThePacketLimitIsRecordedAsFailedAndTheCallIsNotRunAgain() {
        int sixteenMiB = SIXTEEN_MIB;
        ManagedIdempotency<Connection> managed = managedUpTo16MiB();
        IdempotencyKey key = key("leased-over-the-packet");
        java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
        dev.idempotency.IdempotentCall<String> call = dev.idempotency.IdempotentCall.of(key, dev.idempotency.ResultCodec.string());
        assertThatThrownBy(() -> managed.lease(call, attempt -> {
            calls.incrementAndGet();
            return "x".repeat(sixteenMiB);
        })).isInstanceOf(ResultTooLargeException.class).hasCauseInstanceOf(ResultOverPacketLimitException.class)
                .hasMessageContaining("over the server's max_allowed_packet")
                .hasMessageContaining("the operation is recorded as failed")
                .satisfies(e -> assertThat(((ResultTooLargeException) e).size()).isEqualTo(sixteenMiB));
        Outcome<String> retry = managed.lease(call, attempt -> {
            calls.incrementAndGet();
            return "small";
        });
        assertThat(retry.status()).as("the retry gets the recorded failure").isEqualTo(Outcome.Status.FAILED);
        assertThat(calls).as("the call ran once").hasValue(1);
    }

    /**
     * Lease mode's recovery point meets the same limit before the call: the checkpoint over
     * {@code max_allowed_packet} is refused before it is sent (sending it would drop the connection
     * and make every retry run the prepare again), the claim's transaction rolls back with the
     * prepare's writes, nothing of the key is recorded, the call does not run, and the next attempt
     * claims the key anew as its first attempt.
     */
    @Test
    void aRecoveryPointOverThePacketLimitRecordsNothingOfTheKeyAndTheCallDoesNotRun() throws Exception {
        int sixteenMiB = SIXTEEN_MIB;
        ManagedIdempotency<Connection> managed = managedUpTo16MiB();
        IdempotencyKey key = key("recovery-point-over-the-packet");
        java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger attempts = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicReference<String> prepareValue = new java.util.concurrent.atomic.AtomicReference<>(
                "x".repeat(sixteenMiB));
        dev.idempotency.Phases<Connection, String, java.sql.SQLException> phases = dev.idempotency.Phases
                .<Connection, String, java.sql.SQLException>prepare(c -> {
                    work(c, key);
                    return prepareValue.get();
                }, dev.idempotency.ResultCodec.string())
                .call((attempt, prepared) -> {
                    calls.incrementAndGet();
                    attempts.set(attempt.number());
                    return "called";
                }).result(dev.idempotency.ResultCodec.string());
        assertThatThrownBy(() -> managed.run(key, phases)).isInstanceOfSatisfying(ResultTooLargeException.class, e -> {
            assertThat(e.reason()).as("names what was too large, and whose limit").startsWith("the recovery point")
                    .contains("over the server's max_allowed_packet");
            assertThat(e.getMessage()).contains("the claim's transaction was rolled back, the prepare's writes with it: nothing of"
                    + " the key was recorded, and the call did not run").doesNotContain("the encoded result");
            assertThat(e.getCause()).as("the store's own refusal").isInstanceOf(ResultOverPacketLimitException.class)
                    .hasMessageContaining("nothing was sent");
            assertThat(e.size()).isEqualTo(sixteenMiB);
        });
        assertThat(calls).as("the call did not run").hasValue(0);
        assertThat(records()).as("nothing of the key is recorded").isZero();
        assertThat(effects()).as("the prepare's writes rolled back").isZero();
        prepareValue.set("small");
        assertThat(managed.run(key, phases).isExecuted()).as("a retry claims the key anew, at once").isTrue();
        assertThat(attempts).as("as its first attempt").hasValue(1);
        assertThat(calls).hasValue(1);
    }

    /**
     * Write-last mode meets the same limit: the completed record over {@code max_allowed_packet} is
     * refused before it is sent, the work is rolled back, nothing is recorded, and the pool's
     * connection is still usable for the retry.
     */
    @Test
    void aWriteLastRecordOverThePacketLimitIsRefusedBeforeItIsSent() throws Exception {
        int sixteenMiB = SIXTEEN_MIB;
        ManagedIdempotency<Connection> managed = managedUpTo16MiB();
        IdempotencyKey key = key("write-last-over-the-packet");
        assertThatThrownBy(() -> managed.writeLast(key, c -> {
            work(c, key);
            return "x".repeat(sixteenMiB);
        })).isInstanceOf(ResultOverPacketLimitException.class).hasMessageContaining("nothing was sent");
        assertThat(effects()).as("the work was rolled back").isZero();
        assertThat(records()).as("nothing recorded").isZero();
        assertThat(managed.writeLast(key, c -> work(c, key)).isExecuted()).as("the retry runs and records").isTrue();
        assertThat(records()).isEqualTo(1);
    }

    /** A result whose statement is, by the documented bound, exactly the packet limit is recorded: only more is refused. */
    @Test
    void aResultWhoseStatementIsExactlyThePacketLimitIsRecorded() throws Exception {
        long packet;
        try (Connection c = dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT @@max_allowed_packet")) {
            rs.next();
            packet = rs.getLong(1);
        }
        IdempotencyKey key = key("at-the-packet");
        int size = (int) (packet - 1024 - 2L * (key.scope().length() + key.id().length() + dev.idempotency.ResultCodec.string().name().length()));
        Idempotency<Connection> generous = engine(KeyPolicy.builder().maxResultBytes(size).build());
        assertThat(Tx.commit(dataSource(), c -> generous.execute(key, c, () -> "x".repeat(size))).isExecuted()).isTrue();
        assertThat(Tx.commit(dataSource(), c -> generous.execute(key, c, () -> "not run")).value()).hasSize(size);
    }
}
