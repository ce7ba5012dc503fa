package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.BatchJob;
import dev.idempotency.Fingerprint;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.LeasedIdempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Phases;
import dev.idempotency.ResultCodec;
import dev.idempotency.RetryPolicy;
import dev.idempotency.TransactionConflictException;
import dev.idempotency.testsupport.TestDatabases;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Contract 8 (docs/contract.md) on PostgreSQL, with commits that fail for real: a constraint
 * trigger on the record table, {@code DEFERRABLE INITIALLY DEFERRED}, checks each completed record
 * at {@code COMMIT}. A key whose id starts with {@code refused-} fails the commit with a check
 * violation (SQLState 23514), which is not retried; one whose id starts with {@code conflictN-}
 * fails its first N commits with a serialization failure (40001), which the library retries. In
 * every mode whose transaction the library runs, the listener hears each outcome once, after the
 * commit; an attempt that is retried reaches {@code onRetry} only, and a failure that reaches the
 * caller (the refused commit, the last conflict) reaches {@code onError} once.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresListenerTest {

    private static final String TABLE = "listener_pg_record";

    private HikariDataSource pool;
    private HeardCalls heard;
    private ManagedIdempotency<Connection> managed;
    private LeasedIdempotency<Connection> leased;

    @BeforeAll
    void open() throws SQLException {
        pool = TestDatabases.postgres();
        JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().table(TABLE).build();
        store.createTableIfMissing(pool);
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE SEQUENCE IF NOT EXISTS listener_pg_conflicts");
            s.execute("CREATE OR REPLACE FUNCTION listener_pg_commit_check() RETURNS trigger LANGUAGE plpgsql AS $$\n"
                    + "BEGIN\n"
                    + "  IF NEW.status <> 'IN_PROGRESS' AND NEW.key_id LIKE 'refused-%' THEN\n"
                    + "    RAISE EXCEPTION 'the commit of % is refused', NEW.key_id USING ERRCODE = '23514';\n"
                    + "  END IF;\n"
                    + "  IF NEW.status <> 'IN_PROGRESS' AND NEW.key_id LIKE 'conflict%'\n"
                    + "      AND nextval('listener_pg_conflicts') <= substring(NEW.key_id FROM '^conflict([0-9]+)-')::int THEN\n"
                    + "    RAISE EXCEPTION 'could not serialize access for %', NEW.key_id USING ERRCODE = '40001';\n"
                    + "  END IF;\n"
                    + "  RETURN NULL;\n"
                    + "END $$");
            s.execute("DROP TRIGGER IF EXISTS listener_pg_commit_check ON " + TABLE);
            s.execute("CREATE CONSTRAINT TRIGGER listener_pg_commit_check AFTER INSERT OR UPDATE ON " + TABLE
                    + " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION listener_pg_commit_check()");
        }
        heard = new HeardCalls(pool, TABLE);
        Idempotency<Connection> engine = Idempotency.builder(store).listener(heard).build();
        managed = ManagedIdempotency.builder(engine, JdbcTransactions.of(pool))
                .retryPolicy(RetryPolicy.builder().maxAttempts(2).backoff(Duration.ZERO, Duration.ZERO).build()).build();
        leased = LeasedIdempotency.of(managed, store);
    }

    @AfterAll
    void close() {
        if (pool != null) {
            pool.close();
        }
    }

    @BeforeEach
    void forget() throws SQLException {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute("ALTER SEQUENCE listener_pg_conflicts RESTART WITH 1");
        }
        heard.clear();
    }

    /** @return a fresh key whose id starts with {@code prefix} */
    private static IdempotencyKey key(String prefix) {
        return IdempotencyKey.of("listener", prefix + UUID.randomUUID());
    }

    @Test
    void managedExecuteWhoseCommitIsRefusedIsHeardAsOneErrorAndNoOutcome() {
        IdempotencyKey key = key("refused-");
        assertThatThrownBy(() -> managed.execute(key, tx -> "v")).isInstanceOf(IdempotencyStoreException.class)
                .isNotInstanceOf(TransactionConflictException.class);
        assertThat(heard.calls()).containsExactly(key.id() + ":error:IdempotencyStoreException");
    }

    @Test
    void managedExecuteWhoseCommitConflictsOnceIsHeardAsARetryThenOneOutcome() throws Exception {
        IdempotencyKey key = key("conflict1-");
        assertThat(managed.execute(key, tx -> "v").isExecuted()).isTrue();
        assertThat(heard.calls()).containsExactly(key.id() + ":retry:1", key.id() + ":EXECUTED");
    }

    @Test
    void managedExecuteWhoseCommitConflictsPastTheRetriesIsHeardAsRetriesThenOneError() {
        IdempotencyKey key = key("conflict9-");
        assertThatThrownBy(() -> managed.execute(key, tx -> "v")).isInstanceOf(TransactionConflictException.class);
        assertThat(heard.calls()).containsExactly(key.id() + ":retry:1", key.id() + ":error:TransactionConflictException");
    }

    @Test
    void writeLastWhoseCommitIsRefusedIsHeardAsOneErrorAndAConflictAsARetry() throws Exception {
        IdempotencyKey refused = key("refused-");
        assertThatThrownBy(() -> managed.writeLast(refused, tx -> "v")).isInstanceOf(IdempotencyStoreException.class);
        IdempotencyKey conflict = key("conflict1-");
        assertThat(managed.writeLast(conflict, tx -> "v").isExecuted()).isTrue();
        assertThat(heard.calls()).containsExactly(refused.id() + ":error:IdempotencyStoreException",
                conflict.id() + ":retry:1", conflict.id() + ":EXECUTED");
    }

    @Test
    void leaseModeWhoseFinishCommitIsRefusedIsHeardAsOneErrorAndAConflictAsARetry() throws Exception {
        IdempotencyKey refused = key("refused-");
        assertThatThrownBy(() -> leased.lease(IdempotentCall.of(refused, ResultCodec.string()), attempt -> "called"))
                .isInstanceOf(IdempotencyStoreException.class);
        IdempotencyKey conflict = key("conflict1-");
        assertThat(leased.lease(IdempotentCall.of(conflict, ResultCodec.string()), attempt -> "called").isExecuted()).isTrue();
        assertThat(heard.calls()).containsExactly(refused.id() + ":error:IdempotencyStoreException",
                conflict.id() + ":retry:1", conflict.id() + ":EXECUTED");
    }

    @Test
    void leaseModeWithPhasesWhoseFinishCommitIsRefusedIsHeardAsOneErrorAndAConflictAsARetry() throws Exception {
        Phases<Connection, String, Exception> phases = Phases.<Connection, String, Exception>prepare(tx -> "prepared", ResultCodec.string())
                .call((attempt, prepared) -> prepared + "+called")
                .finish((tx, prepared, called) -> called + "+finished", ResultCodec.string());
        IdempotencyKey refused = key("refused-");
        assertThatThrownBy(() -> leased.run(refused, phases)).isInstanceOf(IdempotencyStoreException.class);
        IdempotencyKey conflict = key("conflict1-");
        assertThat(leased.run(conflict, phases).isExecuted()).isTrue();
        assertThat(heard.calls()).containsExactly(refused.id() + ":error:IdempotencyStoreException",
                conflict.id() + ":retry:1", conflict.id() + ":EXECUTED");
    }

    @Test
    void aManagedChunkWhoseCommitIsRefusedIsHeardAsOneErrorAndNoOutcome() {
        List<IdempotencyKey> chunk = List.of(key("a-"), key("refused-"), key("c-"));
        assertThatThrownBy(() -> managed.executeChunk(chunk, k -> IdempotentCall.of(k, ResultCodec.string()), (tx, k) -> "v"))
                .isInstanceOf(IdempotencyStoreException.class);
        assertThat(heard.calls()).as("one error, with the chunk's first key").containsExactly(chunk.get(0).id()
                + ":error:IdempotencyStoreException");
    }

    @Test
    void aManagedChunkWhoseCommitConflictsOnceIsHeardAsARetryThenItemByItem() throws Exception {
        List<IdempotencyKey> chunk = List.of(key("conflict1-"), key("b-"), key("c-"));
        assertThat(managed.executeChunk(chunk, k -> IdempotentCall.of(k, ResultCodec.string()), (tx, k) -> "v")).hasSize(3);
        assertThat(heard.calls()).containsExactly(chunk.get(0).id() + ":retry:1", chunk.get(0).id() + ":EXECUTED",
                chunk.get(1).id() + ":EXECUTED", chunk.get(2).id() + ":EXECUTED");
    }

    @Test
    void aBatchJobIsHeardItemByItemForEachCommittedChunkAndOnceForTheChunkWhoseCommitIsRefused() {
        List<IdempotencyKey> items = List.of(key("a-"), key("b-"), key("refused-"), key("d-"));
        BatchJob<Connection, IdempotencyKey, String, Exception> job = BatchJob.<Connection, IdempotencyKey, String, Exception>builder(
                managed, k -> IdempotentCall.of(k, ResultCodec.string()), (tx, k) -> "v").chunkSize(2).build();
        assertThatThrownBy(() -> job.process(items.iterator(), -1)).isInstanceOf(IdempotencyStoreException.class);
        assertThat(heard.calls()).containsExactly(items.get(0).id() + ":EXECUTED", items.get(1).id() + ":EXECUTED",
                items.get(2).id() + ":error:IdempotencyStoreException");
    }
}
