package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.testsupport.TestDatabases;
import java.sql.Connection;
import org.junit.jupiter.api.Test;

/** Write-last mode on the PostgreSQL server of the environment, and its round trips on the wire. */
class PostgresWriteLastTest extends AbstractWriteLastTest {

    PostgresWriteLastTest() {
        super(TestDatabases::postgres);
    }

    /**
     * A first execution costs the work's own round trips plus one, in which the record's
     * {@code INSERT} travels with the {@code COMMIT}: here two, the work's statement and that one.
     */
    @Test
    void aFirstExecutionSendsTheRecordWithTheCommitInOneRoundTrip() throws Exception {
        ManagedIdempotency<Connection> m = managed();
        IdempotencyKey warmUp = key();
        m.writeLast(warmUp, c -> effect(c, warmUp, "warm"));
        m.writeLast(warmUp, c -> effect(c, warmUp, "warm again"));
        IdempotencyKey key = key();
        Object[] outcome = new Object[1];
        int first = PostgresIsolationTest.roundTrips(() -> outcome[0] = m.writeLast(key, c -> effect(c, key, "v")));
        Object[] replay = new Object[1];
        int again = PostgresIsolationTest.roundTrips(() -> replay[0] = m.writeLast(key, c -> effect(c, key, "w")));
        System.out.printf("PostgreSQL wire (Sync messages), write-last: a first execution costs %d round trips, commit"
                + " included; a replay %d%n", first, again);
        assertThat(outcome[0]).isInstanceOf(Outcome.Executed.class);
        assertThat(replay[0]).isInstanceOf(Outcome.Replayed.class);
        assertThat(first).isEqualTo(2);
        assertThat(effects(key)).isEqualTo(1);
        assertThat(record(key)).containsExactly("COMPLETED", "v");
    }

    /**
     * A lock timeout longer than PostgreSQL's {@code lock_timeout} maximum (about 24.8 days) is
     * bounded to that maximum, as the claim's is, not sent as a value the server refuses.
     */
    @Test
    void aLockTimeoutOverPostgresMaximumIsBoundedNotRefused() throws Exception {
        ManagedIdempotency<Connection> m = managed(java.time.InstantSource.system(), java.time.Duration.ofDays(30));
        IdempotencyKey key = key();
        assertThat(m.writeLast(key, c -> effect(c, key, "v")).isExecuted()).isTrue();
        assertThat(record(key)).containsExactly("COMPLETED", "v");
    }
}
