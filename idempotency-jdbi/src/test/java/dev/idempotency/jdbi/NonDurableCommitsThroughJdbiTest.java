package dev.idempotency.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.jdbc.DurabilityCheck;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spi.LeasingStore;
import dev.idempotency.testsupport.TestDatabases;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Contract 7 (docs/contract.md), last row, through the Jdbi adapter: a database setting that
 * acknowledges commits before they are durable is reported once per engine through the listener
 * given to the engine alone (idempotency-jdbc's {@code NonDurableCommitsTest} covers the rest).
 */
class NonDurableCommitsThroughJdbiTest {

    private final List<String> warnings = new CopyOnWriteArrayList<>();
    private final IdempotencyListener listener = new IdempotencyListener() {
        @Override
        public void onNonDurableCommits(String database, String setting) {
            warnings.add(database + ": " + setting);
        }
    };

    /**
     * The listener is given once, to the engine, which hands it to its store: through the Jdbi
     * adapter too, though the database was asked first on the store itself (the table created at
     * startup, as Boot does), and once for each engine on the store.
     */
    @Test
    void theEngineTellsItsListenerGivenToItAloneOnce(@TempDir Path dir) throws Exception {
        try (HikariDataSource ds = TestDatabases.pool("jdbc:h2:file:" + dir.resolve("db"), null, null, 4)) {
            JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().durabilityCheck(DurabilityCheck.WARN_ONLY).build();
            store.createTableIfMissing(ds);
            Jdbi jdbi = Jdbi.create(ds);
            Idempotency<Handle> engine = JdbiIdempotency.builder(store).listener(listener).build();
            assertThat(engine.store()).isInstanceOf(LeasingStore.class);
            for (int i = 0; i < 3; i++) {
                IdempotencyKey key = IdempotencyKey.of("durable", "jdbi-" + i);
                assertThat(jdbi.inTransaction(h -> engine.execute(key, h, () -> "done")).isExecuted()).isTrue();
            }
            assertThat(warnings).singleElement().asString().startsWith("H2: H2 WRITE_DELAY=500:");

            List<String> heardBySecond = new CopyOnWriteArrayList<>();
            Idempotency<Connection> second = Idempotency.builder(store).listener(new IdempotencyListener() {
                @Override
                public void onNonDurableCommits(String database, String setting) {
                    heardBySecond.add(database);
                }
            }).build();
            for (int i = 0; i < 2; i++) {
                IdempotencyKey key = IdempotencyKey.of("durable", "jdbc-" + i);
                jdbi.useTransaction(h -> second.execute(key, h.getConnection(), () -> "done"));
            }
            assertThat(heardBySecond).containsExactly("H2");
            assertThat(warnings).hasSize(1);
        }
    }
}
