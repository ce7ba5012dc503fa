package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.Outcome;
import dev.idempotency.jdbc.dialect.MariaDbDialect;
import dev.idempotency.jdbc.dialect.PostgresDialect;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Contract 7 (docs/contract.md), last row: a database setting that acknowledges commits before they
 * are durable is reported once per store (SLF4J and the listener), or refused in strict mode before
 * anything is written. H2 with its default {@code WRITE_DELAY} is the case a crash loop found
 * losing acknowledged commits (docs/reliability.md).
 */
class NonDurableCommitsTest {

    private final List<String> warnings = new CopyOnWriteArrayList<>();
    private final IdempotencyListener listener = new IdempotencyListener() {
        @Override
        public void onNonDurableCommits(String database, String setting) {
            warnings.add(database + ": " + setting);
        }
    };

    @Test
    void anH2FileWithItsDefaultWriteDelayIsReportedOnceAndTheWorkStillRuns(@TempDir Path dir) throws Exception {
        try (HikariDataSource ds = TestDatabases.pool("jdbc:h2:file:" + dir.resolve("db"), null, null, 4)) {
            JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().listener(listener).build();
            store.createTableIfMissing(ds);
            Idempotency<Connection> idem = Idempotency.of(store);
            for (int i = 0; i < 3; i++) {
                IdempotencyKey key = IdempotencyKey.of("durable", "k" + i);
                Outcome<String> outcome = Tx.commit(ds, c -> idem.execute(key, c, () -> "done"));
                assertThat(outcome.isExecuted()).isTrue();
            }
            assertThat(warnings).singleElement().asString().startsWith("H2: H2 WRITE_DELAY=500:").contains(";WRITE_DELAY=0");
        }
    }

    @Test
    void strictModeRefusesAnH2FileWithItsDefaultWriteDelayBeforeWritingAnything(@TempDir Path dir) throws Exception {
        try (HikariDataSource ds = TestDatabases.pool("jdbc:h2:file:" + dir.resolve("db"), null, null, 4)) {
            JdbcIdempotencyStore.ofDefaults().createTableIfMissing(ds);
            JdbcIdempotencyStore strict = JdbcIdempotencyStore.builder().requireDurableCommits(true).listener(listener).build();
            Idempotency<Connection> idem = Idempotency.of(strict);
            IdempotencyKey key = IdempotencyKey.of("durable", "strict");
            for (int i = 0; i < 2; i++) { // refused every time, told once
                assertThatThrownBy(() -> Tx.commit(ds, c -> idem.execute(key, c, () -> "never")))
                        .isInstanceOfSatisfying(NonDurableCommitsException.class, e -> {
                            assertThat(e.keyId()).isEqualTo(key.id());
                            assertThat(e.setting()).startsWith("H2 WRITE_DELAY=500");
                        })
                        .hasMessageContaining("WRITE_DELAY=500").hasMessageContaining("requireDurableCommits")
                        .hasMessageContaining("nothing was written");
            }
            assertThat(warnings).hasSize(1);
            assertThat(Tx.count(ds, "SELECT COUNT(*) FROM idempotency_record")).isZero();
        }
    }

    @Test
    void durableSettingsAndInMemoryDatabasesAreNotReported(@TempDir Path dir) throws Exception {
        for (String url : List.of("jdbc:h2:file:" + dir.resolve("durable") + ";WRITE_DELAY=0", "jdbc:h2:mem:durable-" + dir.hashCode(),
                "jdbc:sqlite:" + dir.resolve("durable.db"), "jdbc:sqlite::memory:?synchronous=OFF")) {
            try (HikariDataSource ds = TestDatabases.pool(url, null, null, 1)) {
                JdbcIdempotencyStore strict = JdbcIdempotencyStore.builder().requireDurableCommits(true).listener(listener).build();
                strict.createTableIfMissing(ds);
                Outcome<String> outcome = Tx.commit(ds, c -> Idempotency.of(strict).execute(IdempotencyKey.of("durable", "k"), c, () -> "done"));
                assertThat(outcome.isExecuted()).as(url).isTrue();
            }
        }
        assertThat(warnings).isEmpty();
    }

    @Test
    void sqliteWithSynchronousOffIsReported(@TempDir Path dir) throws Exception {
        try (HikariDataSource ds = TestDatabases.pool("jdbc:sqlite:" + dir.resolve("fast.db") + "?synchronous=OFF", null, null, 1)) {
            JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().listener(listener).build();
            store.createTableIfMissing(ds);
            Tx.commit(ds, c -> Idempotency.of(store).execute(IdempotencyKey.of("durable", "k"), c, () -> "done"));
            assertThat(warnings).singleElement().asString().startsWith("SQLite: SQLite synchronous=OFF");
        }
    }

    /** The test server may run with fsync off (scripts/db-servers.sh does, for speed): the answer follows the server. */
    @Test
    void postgresReportsFsyncOffOrSynchronousCommitOff() throws Exception {
        try (HikariDataSource ds = TestDatabases.postgres(); Connection c = ds.getConnection()) {
            PostgresDialect dialect = new PostgresDialect();
            if (text(c, "SHOW fsync").equals("off")) {
                assertThat(dialect.nonDurableCommits(c)).get().asString().startsWith("PostgreSQL fsync=off");
                return;
            }
            try (Statement s = c.createStatement()) {
                s.execute("SET synchronous_commit = off");
                assertThat(dialect.nonDurableCommits(c)).get().asString().startsWith("PostgreSQL synchronous_commit=off");
                s.execute("SET synchronous_commit = on");
                assertThat(dialect.nonDurableCommits(c)).isEmpty();
            }
        }
    }

    @Test
    void mariadbReportsALogNotFlushedAtEachCommit() throws Exception {
        try (HikariDataSource ds = TestDatabases.mariadb(); Connection c = ds.getConnection()) {
            Optional<String> answer = new MariaDbDialect().nonDurableCommits(c);
            String flush = text(c, "SELECT @@innodb_flush_log_at_trx_commit");
            if (flush.equals("1")) {
                assertThat(answer).isEmpty();
            } else {
                assertThat(answer).get().asString().contains("innodb_flush_log_at_trx_commit=" + flush);
            }
        }
    }

    private static String text(Connection c, String sql) throws Exception {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
