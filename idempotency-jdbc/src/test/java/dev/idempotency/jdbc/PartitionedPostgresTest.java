package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.KeyPolicy;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.RetryPolicy;
import dev.idempotency.jdbc.dialect.PartitionedPostgresDialect;
import dev.idempotency.jdbc.dialect.TableName;
import dev.idempotency.jdbc.kit.JdbcStoreContract;
import dev.idempotency.testsupport.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The record table partitioned by expiry day ({@link PartitionedPostgresDialect}) on the PostgreSQL
 * server of {@code scripts/db-servers.sh}: one execution per key under concurrent claims although
 * the table has no unique key on it, records in their day's partition, purge by dropping the days
 * that ended, the bounded purge across partitions, and READ COMMITTED required; and the testkit's
 * contract on such a table ({@link Contract}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PartitionedPostgresTest {

    static final TestDatabase DB = TestDatabase.PARTITIONED_POSTGRES;

    private static final int KEYS = 40;
    private static final int SENDERS = 6;

    private HikariDataSource pool;
    private TableName table;
    private JdbcIdempotencyStore store;
    private final AtomicLong clockMillis = new AtomicLong(Instant.parse("2030-03-10T12:00:00Z").toEpochMilli());
    private final InstantSource clock = () -> Instant.ofEpochMilli(clockMillis.get());

    @BeforeAll
    void open() throws SQLException {
        pool = DB.pool("partitioned");
        table = TableName.of("idem_by_day_" + UUID.randomUUID().toString().substring(0, 8));
        // tag::setup[]
        store = JdbcIdempotencyStore.builder().table(table).dialect(new PartitionedPostgresDialect()).build();
        store.createTableIfMissing(pool);
        try (Connection c = pool.getConnection()) { // auto-commit: each partition is created at once
            PostgresPartitions.create(c, table, clock.instant(), clock.instant().plus(Duration.ofDays(3)));
        }
        // end::setup[]
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.executeUpdate("CREATE TABLE IF NOT EXISTS work_by_day (id BIGSERIAL PRIMARY KEY, k VARCHAR(200) NOT NULL)");
        }
    }

    @AfterAll
    void close() throws SQLException {
        if (pool != null) {
            try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS " + table);
            }
            pool.close();
        }
    }

    private Idempotency<Connection> engine(Duration retention) {
        return engine(retention, clock);
    }

    private Idempotency<Connection> engine(Duration retention, InstantSource clock) {
        return Idempotency.builder(store).clock(clock).keyPolicy(KeyPolicy.builder().retention(retention).build()).build();
    }

    private long count(String sql, String arg) throws SQLException {
        try (Connection c = pool.getConnection(); PreparedStatement s = c.prepareStatement(sql)) {
            s.setString(1, arg);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    @Test
    void concurrentClaimsOfOneKeyRunItOnceAlthoughNoUniqueKeyGuardsIt() throws Exception {
        // A clock that moves on every reading: concurrent claims of one key carry different expiries, so
        // that the primary key (scope, key_id, expires_at) cannot be what refuses the second record.
        AtomicLong ticks = new AtomicLong(clockMillis.get());
        InstantSource ticking = () -> Instant.ofEpochMilli(ticks.getAndIncrement());
        ManagedIdempotency<Connection> managed = ManagedIdempotency.builder(engine(Duration.ofHours(24), ticking),
                JdbcTransactions.of(pool))
                .retryPolicy(RetryPolicy.builder().maxAttempts(10).build()).build();
        String prefix = "race-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        ExecutorService senders = Executors.newFixedThreadPool(SENDERS);
        try {
            for (int k = 0; k < KEYS; k++) {
                String key = prefix + k;
                CyclicBarrier start = new CyclicBarrier(SENDERS);
                List<Future<Outcome<String>>> sent = new ArrayList<>();
                for (int i = 0; i < SENDERS; i++) {
                    sent.add(senders.submit(() -> {
                        start.await(10, TimeUnit.SECONDS);
                        return managed.execute(IdempotencyKey.of("day", key), tx -> {
                            try (PreparedStatement s = tx.prepareStatement("INSERT INTO work_by_day (k) VALUES (?)")) {
                                s.setString(1, key);
                                s.executeUpdate();
                            }
                            return UUID.randomUUID().toString();
                        });
                    }));
                }
                List<String> values = new ArrayList<>();
                for (Future<Outcome<String>> f : sent) {
                    values.add(f.get(60, TimeUnit.SECONDS).value());
                }
                assertThat(values).as("every sender of %s is given the one execution's value", key).containsOnly(values.get(0));
                assertThat(count("SELECT COUNT(*) FROM work_by_day WHERE k = ?", key)).as("executions of %s", key).isEqualTo(1);
                assertThat(count("SELECT COUNT(*) FROM " + table + " WHERE key_id = ?", key)).as("records of %s", key).isEqualTo(1);
            }
        } finally {
            senders.shutdownNow();
        }
        assertThat(count("SELECT COUNT(*) FROM " + table + "_default WHERE key_id LIKE ?", prefix + "%"))
                .as("records in the default partition").isZero();
    }

    @Test
    void expiredDaysArePurgedByDroppingTheirPartitionAndTheBoundedPurgeStillWorks() throws Exception {
        String scope = "purge-" + UUID.randomUUID().toString().substring(0, 8);
        Instant start = clock.instant();
        // 30 records expiring on the first day (retention 1 hour), 30 on the third day (retention 2 days).
        for (Duration retention : List.of(Duration.ofHours(1), Duration.ofDays(2))) {
            Idempotency<Connection> engine = engine(retention);
            for (int i = 0; i < 30; i++) {
                try (Connection c = pool.getConnection()) {
                    c.setAutoCommit(false);
                    engine.execute(IdempotencyKey.of(scope, retention + "-" + i), c, () -> "r");
                    c.commit();
                }
            }
        }
        String firstDay = table.simpleName() + "_p" + start.toString().substring(0, 10).replace("-", "");
        assertThat(count("SELECT COUNT(*) FROM " + firstDay + " WHERE scope = ?", scope)).isEqualTo(30);

        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            assertThat(PostgresPartitions.dropExpired(c, table, start, Duration.ofSeconds(1)))
                    .as("no day has ended yet").isEmpty();
            // The bounded purge, row by row, across partitions: the first day's records have expired 2 hours later.
            assertThat(store.purgeExpired(c, start.plus(Duration.ofHours(2)), 10)).isEqualTo(10);
            c.commit();
            // tag::drop[]
            List<String> dropped = PostgresPartitions.dropExpired(c, table,
                    start.truncatedTo(ChronoUnit.DAYS).plus(Duration.ofDays(1)), Duration.ofSeconds(1));
            c.commit();
            // end::drop[]
            assertThat(dropped).containsExactly(firstDay);
        }
        assertThat(count("SELECT COUNT(*) FROM " + table + " WHERE scope = ?", scope)).as("the later day's records stay").isEqualTo(30);
        assertThat(count("SELECT COUNT(*) FROM pg_class WHERE relname = ?", firstDay)).isZero();

        // A key of the dropped day is new again; one of the later day still replays.
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            Idempotency<Connection> engine = engine(Duration.ofDays(2));
            assertThat(engine.execute(IdempotencyKey.of(scope, Duration.ofHours(1) + "-0"), c, () -> "again").isReplay()).isFalse();
            assertThat(engine.execute(IdempotencyKey.of(scope, Duration.ofDays(2) + "-0"), c, () -> "again").isReplay()).isTrue();
            c.rollback();
        }
    }

    /**
     * Write-last mode on the partitioned table goes through the claim, under the key's lock (the
     * table has no unique key for an {@code INSERT ... ON CONFLICT} to meet): the duplicate runs,
     * is rolled back and replays, and the key has one record.
     */
    @Test
    void writeLastOnThePartitionedTableKeepsOneRecordAndTheDuplicateReplays() throws Exception {
        ManagedIdempotency<Connection> managed = ManagedIdempotency.builder(engine(Duration.ofHours(1)), JdbcTransactions.of(pool)).build();
        IdempotencyKey key = IdempotencyKey.of("write-last", UUID.randomUUID().toString());
        Outcome<String> first = managed.writeLast(key, c -> "first");
        Outcome<String> again = managed.writeLast(key, c -> "second");
        assertThat(first.isExecuted()).isTrue();
        assertThat(again.status()).isEqualTo(Outcome.Status.REPLAYED);
        assertThat(again.value()).isEqualTo("first");
        assertThat(count("SELECT COUNT(*) FROM " + table + " WHERE key_id = ?", key.id())).isEqualTo(1);
    }

    /** The figure of the sizing arithmetic in docs/scale-out.md: a record with a 1 KiB result, its share of the table and indexes. */
    @Test
    void theSizeOfARecordWithAOneKibResultIsMeasured() throws Exception {
        TableName sized = TableName.of(table.simpleName() + "_sz");
        JdbcIdempotencyStore sizedStore = JdbcIdempotencyStore.builder().table(sized).dialect(new PartitionedPostgresDialect()).build();
        sizedStore.createTableIfMissing(pool);
        int records = 2_000;
        try (Connection c = pool.getConnection()) {
            PostgresPartitions.create(c, sized, clock.instant(), clock.instant().plus(Duration.ofDays(1)));
            c.setAutoCommit(false);
            Idempotency<Connection> engine = Idempotency.builder(sizedStore).clock(clock).build();
            byte[] result = new byte[1024];
            for (int i = 0; i < records; i++) {
                new java.util.Random(i).nextBytes(result); // incompressible, as a typical encoded response is not
                byte[] value = result.clone();
                engine.execute(IdempotencyKey.of("tenant-0001", UUID.randomUUID().toString()), c, () -> value);
            }
            c.commit();
            c.setAutoCommit(true);
            try (Statement s = c.createStatement()) {
                s.execute("VACUUM ANALYZE " + sized);
                try (ResultSet rs = s.executeQuery("SELECT SUM(pg_total_relation_size(i.inhrelid)) FROM pg_inherits i"
                        + " WHERE i.inhparent = CAST('" + sized + "' AS regclass)")) {
                    rs.next();
                    long bytes = rs.getLong(1);
                    System.out.printf("[partitioned] %d records with a 1 KiB result: %d bytes with indexes, %d bytes a record%n",
                            records, bytes, bytes / records);
                    assertThat(bytes / records).isBetween(1024L, 4096L);
                }
                s.execute("DROP TABLE " + sized);
            }
        }
    }

    @Test
    void aClaimUnderRepeatableReadIsRefusedRatherThanRiskingASecondRecord() throws SQLException {
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            try {
                assertThatThrownBy(() -> engine(Duration.ofHours(1)).execute(IdempotencyKey.of("rr", "k"), c, () -> "x"))
                        .isInstanceOf(IdempotencyStoreException.class)
                        .rootCause().hasMessageContaining("needs READ COMMITTED").hasMessageContaining("REPEATABLE READ");
            } finally {
                c.rollback();
                c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
            }
        }
    }

    /**
     * Partition maintenance says what it did and refuses what it cannot do: the days created (none
     * the second time), a drop bounded by at least one millisecond that stops, with what it dropped,
     * when a transaction using the table holds it past that bound, names of up to PostgreSQL's 63
     * characters, and a range that ends before it starts.
     */
    @Test
    void partitionMaintenanceReportsWhatItDidAndRefusesWhatItCannotDo() throws Exception {
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        TableName days = TableName.of("idem_pm_" + suffix);
        TableName longest = TableName.of(("idem_pm_" + suffix + "_").concat("x".repeat(53)).substring(0, 53));
        TableName tooLong = TableName.of(longest.simpleName() + "y");
        List<TableName> made = List.of(days, longest, tooLong);
        Instant day = clock.instant();
        try {
            for (TableName t : made) {
                JdbcIdempotencyStore.builder().table(t).dialect(new PartitionedPostgresDialect()).build().createTableIfMissing(pool);
            }
            try (Connection c = pool.getConnection()) {
                String first = days.simpleName() + "_p" + day.toString().substring(0, 10).replace("-", "");
                assertThat(PostgresPartitions.create(c, days, day, day.plus(Duration.ofDays(2))))
                        .hasSize(3).startsWith(first);
                assertThat(PostgresPartitions.create(c, days, day, day.plus(Duration.ofDays(2))))
                        .as("every day exists already").isEmpty();
                assertThat(PostgresPartitions.create(c, longest, day, day)).as("a name of 63 characters").hasSize(1);
                assertThatThrownBy(() -> PostgresPartitions.create(c, tooLong, day, day))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("63");
                assertThatThrownBy(() -> PostgresPartitions.create(c, days, day, day.minus(Duration.ofDays(1))))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("within 3660 days after 'from'");
            }
            JdbcIdempotencyStore daysStore = JdbcIdempotencyStore.builder().table(days).dialect(new PartitionedPostgresDialect()).build();
            Idempotency<Connection> engine = Idempotency.builder(daysStore).clock(clock)
                    .keyPolicy(KeyPolicy.builder().retention(Duration.ofHours(1)).build()).build();
            Instant later = day.plus(Duration.ofDays(5));
            try (Connection holder = pool.getConnection(); Connection c = pool.getConnection()) {
                holder.setAutoCommit(false);
                c.setAutoCommit(false);
                engine.execute(IdempotencyKey.of("pm", "held"), holder, () -> "v"); // uses the first day's partition, uncommitted
                assertThat(PostgresPartitions.dropExpired(c, days, later, Duration.ofMillis(1)))
                        .as("the first drop waits for the holder, and stops there").isEmpty();
                c.rollback();
                holder.rollback();
                assertThatThrownBy(() -> PostgresPartitions.dropExpired(c, days, later, Duration.ZERO))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 1 ms");
                assertThat(PostgresPartitions.dropExpired(c, days, later, Duration.ofMillis(1)))
                        .as("with nobody holding the table, every ended day").hasSize(3);
                c.commit();
            }
        } finally {
            try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
                for (TableName t : made) {
                    s.execute("DROP TABLE IF EXISTS " + t);
                }
            }
        }
    }

    /**
     * The testkit's contract ({@link JdbcStoreContract}) on a table of its own. No day partition is
     * created: every record lands in the default partition, and the key's uniqueness rests on the
     * dialect's lock alone.
     */
    @Nested
    class Contract extends JdbcStoreContract {
        Contract() {
            super(DB);
        }

        @Override
        protected JdbcIdempotencyStore.Builder configure(JdbcIdempotencyStore.Builder store) {
            return store.table("idempotency_kit_by_day");
        }
    }
}
