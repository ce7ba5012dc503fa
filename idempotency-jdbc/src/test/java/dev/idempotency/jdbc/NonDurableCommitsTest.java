package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.Outcome;
import dev.idempotency.jdbc.internal.JdbcExecutor;
import dev.idempotency.jdbc.dialect.MariaDbDialect;
import dev.idempotency.jdbc.dialect.PostgresDialect;
import dev.idempotency.testsupport.TestDatabases;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcConnectionPool;
import org.h2.tools.Server;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Contract 7 (docs/contract.md), last row: a database setting that acknowledges commits before they
 * are durable is reported once per store through SLF4J and once per engine through its listener,
 * given to the engine only; one whose commits die with the application's own process (an embedded
 * H2 file with its default {@code WRITE_DELAY}, the case a crash loop found losing acknowledged
 * commits and running their work twice, docs/reliability.md) is refused by default, and every such
 * setting is refused with {@link DurabilityCheck#REFUSE_ANY}, before anything is written.
 */
class NonDurableCommitsTest {

    private final List<String> warnings = new CopyOnWriteArrayList<>();
    private final IdempotencyListener listener = new IdempotencyListener() {
        @Override
        public void onNonDurableCommits(String database, String setting) {
            warnings.add(database + ": " + setting);
        }
    };

    /** An engine that hears through {@link #listener}: the one place the listener is given. */
    private Idempotency<Connection> heard(JdbcIdempotencyStore store) {
        return Idempotency.builder(store).listener(listener).build();
    }

    /** The README's three steps on an H2 file, with H2's defaults: refused, not run at the risk of a duplicate. */
    @Test
    void anEmbeddedH2FileWithItsDefaultWriteDelayIsRefusedByDefault(@TempDir Path dir) throws Exception {
        try (HikariDataSource ds = TestDatabases.pool("jdbc:h2:file:" + dir.resolve("db"), null, null, 4)) {
            assertRefusedAndNothingWritten(ds, JdbcIdempotencyStore.builder().build(), "REFUSE_EMBEDDED, the default");
        }
    }

    /** H2's own pool hands out a subclass of H2's connection: the database is still seen as embedded. */
    @Test
    void anEmbeddedH2FileThroughH2sOwnPoolIsRefusedByDefault(@TempDir Path dir) throws Exception {
        JdbcConnectionPool ds = JdbcConnectionPool.create("jdbc:h2:file:" + dir.resolve("db"), "", "");
        try {
            assertRefusedAndNothingWritten(ds, JdbcIdempotencyStore.builder().build(), "REFUSE_EMBEDDED, the default");
        } finally {
            ds.dispose();
        }
    }

    /**
     * The durability check is per database: an application whose shared default store saw a durable
     * database first (an in-memory H2) is still refused on an H2 file with the default WRITE_DELAY.
     */
    @Test
    void theSharedDefaultStoreChecksEachDatabaseItIsGiven(@TempDir Path dir) throws Exception {
        try (HikariDataSource memory = TestDatabases.pool("jdbc:h2:mem:first-" + dir.hashCode(), null, null, 1);
                HikariDataSource file = TestDatabases.pool("jdbc:h2:file:" + dir.resolve("db"), null, null, 1)) {
            for (DataSource ds : List.of(memory, file)) {
                JdbcIdempotencyStore.builder().durabilityCheck(DurabilityCheck.WARN_ONLY).build().createTableIfMissing(ds);
            }
            IdempotencyKey key = IdempotencyKey.of("durable", "shared");
            assertThat(Tx.commit(memory, c -> Idempotent.execute(key, c, () -> "ran")).isExecuted()).isTrue();
            assertThatThrownBy(() -> Tx.commit(file, c -> Idempotent.execute(key, c, () -> "never")))
                    .isInstanceOf(NonDurableCommitsException.class).hasMessageContaining("WRITE_DELAY=500");
            assertThat(Tx.count(file, "SELECT COUNT(*) FROM idempotency_record")).isZero();
            // and the durable database, asked once, still runs
            assertThat(Tx.commit(memory, c -> Idempotent.execute(IdempotencyKey.of("durable", "again"), c, () -> "ran")).isExecuted()).isTrue();
        }
    }

    /** The same through a store of one's own, with the listener told once for each database that is not durable. */
    @Test
    void oneStoreChecksEachDatabaseOnceAndTellsEach(@TempDir Path dir) throws Exception {
        try (HikariDataSource memory = TestDatabases.pool("jdbc:h2:mem:one-" + dir.hashCode(), null, null, 1);
                HikariDataSource first = TestDatabases.pool("jdbc:h2:file:" + dir.resolve("first"), null, null, 1);
                HikariDataSource second = TestDatabases.pool("jdbc:h2:file:" + dir.resolve("second"), null, null, 1)) {
            JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().durabilityCheck(DurabilityCheck.WARN_ONLY).build();
            Idempotency<Connection> idem = heard(store);
            List<DataSource> order = List.of(memory, first, second, first, memory, second);
            for (int i = 0; i < order.size(); i++) {
                store.createTableIfMissing(order.get(i));
                IdempotencyKey key = IdempotencyKey.of("durable", "k" + i);
                assertThat(Tx.commit(order.get(i), c -> idem.execute(key, c, () -> "done")).isExecuted()).isTrue();
            }
            assertThat(warnings).hasSize(2).allMatch(w -> w.startsWith("H2: H2 WRITE_DELAY=500"));
        }
    }

    @Test
    void refuseAnyRefusesAnH2FileWithItsDefaultWriteDelay(@TempDir Path dir) throws Exception {
        try (HikariDataSource ds = TestDatabases.pool("jdbc:h2:file:" + dir.resolve("db"), null, null, 4)) {
            assertRefusedAndNothingWritten(ds, JdbcIdempotencyStore.builder().durabilityCheck(DurabilityCheck.REFUSE_ANY).build(), "DurabilityCheck.REFUSE_ANY)");
        }
    }

    @Test
    void warnOnlyReportsAnH2FileWithItsDefaultWriteDelayOnceAndTheWorkStillRuns(@TempDir Path dir) throws Exception {
        try (HikariDataSource ds = TestDatabases.pool("jdbc:h2:file:" + dir.resolve("db"), null, null, 4)) {
            JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().durabilityCheck(DurabilityCheck.WARN_ONLY).build();
            assertReportedOnceAndRun(ds, store, "H2: H2 WRITE_DELAY=500:");
            assertThat(warnings.get(0)).contains(";WRITE_DELAY=0");
        }
    }

    /**
     * Over H2's TCP server the commits wait in the server's process, not the application's: as for
     * the other servers' settings, the default warns once and goes on.
     */
    @Test
    void anH2ServerWithItsDefaultWriteDelayIsReportedButNotRefusedByDefault(@TempDir Path dir) throws Exception {
        Server server = Server.createTcpServer("-tcpPort", "0", "-baseDir", dir.toString(), "-ifNotExists").start();
        try (HikariDataSource ds = TestDatabases.pool("jdbc:h2:tcp://127.0.0.1:" + server.getPort() + "/db", null, null, 4)) {
            assertReportedOnceAndRun(ds, JdbcIdempotencyStore.builder().build(), "H2: H2 WRITE_DELAY=500:");
        } finally {
            server.stop();
        }
    }

    private void assertRefusedAndNothingWritten(DataSource ds, JdbcIdempotencyStore store, String check) throws Exception {
        JdbcIdempotencyStore.builder().durabilityCheck(DurabilityCheck.WARN_ONLY).build().createTableIfMissing(ds);
        Idempotency<Connection> idem = heard(store);
        IdempotencyKey key = IdempotencyKey.of("durable", "refused");
        for (int i = 0; i < 2; i++) { // refused every time, told once
            assertThatThrownBy(() -> Tx.commit(ds, c -> idem.execute(key, c, () -> "never")))
                    .isInstanceOfSatisfying(NonDurableCommitsException.class, e -> {
                        assertThat(e.keyId()).isEqualTo(key.id());
                        assertThat(e.setting()).startsWith("H2 WRITE_DELAY=500");
                    })
                    .hasMessageContaining("WRITE_DELAY=500").hasMessageContaining(check)
                    .hasMessageContaining("Nothing was written").hasMessageContaining("durabilityCheck(DurabilityCheck.WARN_ONLY)");
        }
        assertThat(warnings).hasSize(1);
        assertThat(Tx.count(ds, "SELECT COUNT(*) FROM idempotency_record")).isZero();
    }

    private void assertReportedOnceAndRun(DataSource ds, JdbcIdempotencyStore store, String warning) throws Exception {
        store.createTableIfMissing(ds);
        Idempotency<Connection> idem = heard(store);
        for (int i = 0; i < 3; i++) {
            IdempotencyKey key = IdempotencyKey.of("durable", "k" + i);
            Outcome<String> outcome = Tx.commit(ds, c -> idem.execute(key, c, () -> "done"));
            assertThat(outcome.isExecuted()).isTrue();
        }
        assertThat(warnings).singleElement().asString().startsWith(warning);
    }

    @Test
    void durableSettingsAndInMemoryDatabasesAreNotReported(@TempDir Path dir) throws Exception {
        for (String url : List.of("jdbc:h2:file:" + dir.resolve("durable") + ";WRITE_DELAY=0", "jdbc:h2:mem:durable-" + dir.hashCode(),
                "jdbc:sqlite:" + dir.resolve("durable.db"), "jdbc:sqlite::memory:?synchronous=OFF")) {
            try (HikariDataSource ds = TestDatabases.pool(url, null, null, 1)) {
                JdbcIdempotencyStore strict = JdbcIdempotencyStore.builder().durabilityCheck(DurabilityCheck.REFUSE_ANY).build();
                strict.createTableIfMissing(ds);
                Outcome<String> outcome = Tx.commit(ds, c -> heard(strict).execute(IdempotencyKey.of("durable", "k"), c, () -> "done"));
                assertThat(outcome.isExecuted()).as(url).isTrue();
            }
        }
        assertThat(warnings).isEmpty();
    }

    @Test
    void sqliteWithSynchronousOffIsReported(@TempDir Path dir) throws Exception {
        try (HikariDataSource ds = TestDatabases.pool("jdbc:sqlite:" + dir.resolve("fast.db") + "?synchronous=OFF", null, null, 1)) {
            JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().build();
            store.createTableIfMissing(ds);
            Tx.commit(ds, c -> heard(store).execute(IdempotencyKey.of("durable", "k"), c, () -> "done"));
            assertThat(warnings).singleElement().asString().startsWith("SQLite: SQLite synchronous=OFF");
        }
    }

    /** The test server may run with fsync off (scripts/db-servers.sh does, for speed): the answer follows the server. */
    @Test
    void postgresReportsFsyncOffOrSynchronousCommitOff() throws Exception {
        try (HikariDataSource ds = TestDatabases.postgres(); Connection c = ds.getConnection()) {
            PostgresDialect dialect = new PostgresDialect();
            if (text(c, "SHOW fsync").equals("off")) {
                assertThat(JdbcExecutor.of(dialect).nonDurableCommits(c)).get().asString().startsWith("PostgreSQL fsync=off");
                return;
            }
            try (Statement s = c.createStatement()) {
                s.execute("SET synchronous_commit = off");
                assertThat(JdbcExecutor.of(dialect).nonDurableCommits(c)).get().asString().startsWith("PostgreSQL synchronous_commit=off");
                s.execute("SET synchronous_commit = on");
                assertThat(JdbcExecutor.of(dialect).nonDurableCommits(c)).isEmpty();
            }
        }
    }

    @Test
    void mariadbReportsALogNotFlushedAtEachCommit() throws Exception {
        try (HikariDataSource ds = TestDatabases.mariadb(); Connection c = ds.getConnection()) {
            Optional<String> answer = JdbcExecutor.of(new MariaDbDialect()).nonDurableCommits(c);
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
