package dev.idempotency.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.jdbc.Idempotent;
import dev.idempotency.testsupport.TestDatabases;
import com.zaxxer.hikari.HikariDataSource;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/**
 * The operator's query of the documentation (docs/message-consumers.md, "Record statuses"), run on
 * H2 and on the PostgreSQL server over records that a consumer left: completed, failed final, and
 * one left in progress by a transaction that committed its claim without a result.
 */
class RecordStatusQueryTest {

    // tag::status-query[]
    static final String RECORDS_BY_GROUP_AND_STATUS = """
            SELECT scope AS consumer_group, status, COUNT(*) AS records, MIN(created_at) AS oldest_created_at_ms
            FROM idempotency_record
            GROUP BY scope, status
            ORDER BY scope, status""";
    // end::status-query[]

    @Test
    void theStatusQueryCountsEachGroupsRecordsByStatusOnH2() throws Exception {
        try (HikariDataSource h2 = TestDatabases.h2("status-" + UUID.randomUUID(), 4)) {
            countsEachStatus(h2);
        }
    }

    @Test
    void theStatusQueryCountsEachGroupsRecordsByStatusOnPostgres() throws Exception {
        try (HikariDataSource postgres = TestDatabases.postgres(4)) {
            countsEachStatus(postgres);
        }
    }

    private static void countsEachStatus(HikariDataSource dataSource) throws Exception {
        Effects effects = new Effects(dataSource);
        ManagedIdempotency<Connection> engine = effects.engine();
        String group = "ops-" + UUID.randomUUID().toString().substring(0, 8);
        IdempotentConsumer<Connection, String, String> consumer = IdempotentConsumer.<Connection, String, String>builder(engine, group,
                        (tx, record) -> {
                            if (record.key().startsWith("bad")) {
                                throw new IllegalStateException("cannot process " + record.key());
                            }
                        })
                .maxAttempts(1).deadLetters((record, reason) -> { }).build();
        assertThat(consumer.handle(record(0, "ok-1")).status()).isEqualTo(Outcome.Status.EXECUTED);
        assertThat(consumer.handle(record(1, "ok-2")).status()).isEqualTo(Outcome.Status.EXECUTED);
        assertThat(consumer.handle(record(2, "bad-1")).status()).isEqualTo(Outcome.Status.FAILED);
        try (Connection c = dataSource.getConnection()) { // a claim committed without its result: stuck in progress
            c.setAutoCommit(false);
            assertThatThrownBy(() -> Idempotent.execute(IdempotencyKey.of(group, "stuck-1"), c, () -> {
                c.commit();
                throw new IllegalStateException("gone after committing its claim");
            })).hasMessage("gone after committing its claim");
            c.rollback();
        }

        Map<String, Integer> counts = new HashMap<>();
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(RECORDS_BY_GROUP_AND_STATUS)) {
            while (rs.next()) {
                if (rs.getString("consumer_group").equals(group)) {
                    counts.put(rs.getString("status"), rs.getInt("records"));
                    assertThat(rs.getLong("oldest_created_at_ms")).isPositive();
                }
            }
        }
        assertThat(counts).containsOnly(Map.entry("COMPLETED", 2), Map.entry("FAILED", 1), Map.entry("IN_PROGRESS", 1));
    }

    private static ConsumerRecord<String, String> record(long offset, String id) {
        ConsumerRecord<String, String> record = new ConsumerRecord<>("orders", 0, offset, id, "v-" + id);
        record.headers().add(MessageIds.DEFAULT_HEADER, id.getBytes(StandardCharsets.UTF_8));
        return record;
    }
}
