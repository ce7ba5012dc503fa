package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.testsupport.TestDatabases;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.sql.Connection;
import java.time.Duration;
import java.time.InstantSource;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Write-last mode on SQLite (a file in WAL mode), whose single writer turns every conflict into a wait. */
class SqliteWriteLastTest extends AbstractWriteLastTest {

    SqliteWriteLastTest() {
        super(() -> {
            try {
                return TestDatabases.pool(TestDatabases.sqliteUrl(Files.createTempDirectory("idempotency-sqlite").resolve("writelast.db"), ""),
                        null, null, 24);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    /**
     * On SQLite the work's own first write already waits for the holder's write lock, bounded by the
     * connection's {@code busy_timeout}, not by the policy's lock timeout (which bounds only the
     * library's statements): the waiter goes on once the holder commits, and replays its result.
     */
    @Override
    @Test
    void aWriteThatWaitsForAnOpenHolderAnswersInProgressAfterTheLockTimeout() throws Exception {
        ManagedIdempotency<Connection> m = managed(InstantSource.system(), Duration.ofMillis(300));
        IdempotencyKey key = key();
        CompletableFuture<Outcome<String>> waiting;
        try (Connection holder = dataSource().getConnection()) {
            holder.setAutoCommit(false);
            assertThat(m.engine().execute(key, holder, () -> effect(holder, key, "holder"))).isInstanceOf(Outcome.Executed.class);
            waiting = CompletableFuture.supplyAsync(() -> {
                try {
                    return m.writeLast(key, c -> effect(c, key, "waiter"));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            holder.commit();
        }
        assertThat(waiting.get(60, TimeUnit.SECONDS)).isInstanceOf(Outcome.Replayed.class).extracting(Outcome::value).isEqualTo("holder");
        assertThat(effects(key)).isEqualTo(1);
    }
}
