package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.KeyPolicy;
import dev.idempotency.Outcome;
import dev.idempotency.testkit.TestClock;
import dev.idempotency.testsupport.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Contract 6 (docs/contract.md): the table name may be schema-qualified. On every database: the DDL
 * creates the table and its index there (twice, harmlessly), and claims, replays and purges work
 * against it; a table whose name extends the default one ({@code idempotency_record_v2}) gets its
 * own index name.
 */
class SchemaQualifiedTableTest {

    static Stream<Arguments> databases() {
        return Stream.of(
                Arguments.of("H2", (Supplier<HikariDataSource>) () -> TestDatabases.h2("schema-qualified"), "CREATE SCHEMA IF NOT EXISTS app"),
                Arguments.of("HSQLDB", (Supplier<HikariDataSource>) () -> TestDatabases.hsqldb("schema-qualified", 4), "CREATE SCHEMA app"),
                Arguments.of("SQLite", (Supplier<HikariDataSource>) SchemaQualifiedTableTest::sqlite, null),
                Arguments.of("PostgreSQL", (Supplier<HikariDataSource>) TestDatabases::postgres, "CREATE SCHEMA IF NOT EXISTS app"),
                Arguments.of("MariaDB", (Supplier<HikariDataSource>) TestDatabases::mariadb, null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void aSchemaQualifiedTableIsCreatedUsedAndPurged(String name, Supplier<HikariDataSource> pools, String createSchema)
            throws Exception {
        try (HikariDataSource ds = pools.get()) {
            String schema;
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                c.setAutoCommit(true);
                if (createSchema != null) {
                    try {
                        s.execute(createSchema);
                    } catch (java.sql.SQLException exists) {
                        // HSQLDB has no IF NOT EXISTS for schemas; a second run finds it
                    }
                    schema = "app";
                } else if (name.equals("SQLite")) {
                    schema = "main";
                } else {
                    try (ResultSet rs = s.executeQuery("SELECT DATABASE()")) {
                        rs.next();
                        schema = rs.getString(1);
                    }
                }
                s.execute("DROP TABLE IF EXISTS " + schema + ".idempotency_record_v2");
            }
            String table = schema + ".idempotency_record_v2";
            JdbcIdempotencyStore store = JdbcIdempotencyStore.builder().table(table).build();
            store.createTableIfMissing(ds);
            store.createTableIfMissing(ds);
            try (Connection c = ds.getConnection()) {
                assertThat(store.ddl(c)).contains("idempotency_record_v2_expires").doesNotContain("_v2_v2");
            }

            TestClock clock = new TestClock(Instant.parse("2026-04-05T01:59:59Z"));
            Idempotency<Connection> idem = Idempotency.builder(store).clock(clock)
                    .keyPolicy(KeyPolicy.builder().retention(Duration.ofMinutes(1)).build()).build();
            IdempotencyKey key = IdempotencyKey.of("t", "k");
            assertThat(Tx.commit(ds, c -> idem.execute(key, c, () -> "first")).isExecuted()).isTrue();
            Outcome<String> replay = Tx.commit(ds, c -> idem.execute(key, c, () -> "second"));
            assertThat(replay.status()).isEqualTo(Outcome.Status.REPLAYED);
            assertThat(replay.value()).isEqualTo("first");
            clock.advance(Duration.ofMinutes(1));
            assertThat(Tx.<Integer>commit(ds, c -> idem.purgeExpired(c, 10))).isEqualTo(1);
            assertThat(Tx.count(ds, "SELECT COUNT(*) FROM " + table)).isZero();
        }
    }

    private static HikariDataSource sqlite() {
        try {
            Path file = Files.createTempFile("idempotency-schema", ".db");
            file.toFile().deleteOnExit();
            return TestDatabases.pool(TestDatabases.sqliteUrl(file, ""), null, null, 1);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
