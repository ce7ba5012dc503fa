package dev.idempotency.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.testsupport.TestDatabases;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.function.BiConsumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Messages per second through the idempotent consumer against a bare consumer that writes the same
 * rows, in the same run, on the same broker and database: per record (one transaction each) and per
 * poll batch of 100 (one transaction each). On demand only:
 * {@code mvn -pl idempotency-kafka -am verify -Dtest=ConsumerThroughputTest -Didempotency.kafka.bench=true}
 * ({@code -Didempotency.kafka.bench.messages=N}, 20000 by default; on H2 in memory, or on the
 * PostgreSQL server of the environment with {@code -Didempotency.kafka.bench.db=postgres}). Prints one line per variant and
 * the ratios; asserts only that every variant wrote every message once.
 */
@EnabledIfSystemProperty(named = "idempotency.kafka.bench", matches = "true")
class ConsumerThroughputTest {

    @Test
    void idempotentAgainstBareConsumersPerRecordAndPerBatchOf100() throws Exception {
        String bootstrap = Broker.bootstrap();
        int messages = Integer.getInteger("idempotency.kafka.bench.messages", 20_000);
        String topic = Broker.newTopic(bootstrap, "bench", 1);
        try (KafkaProducer<String, String> producer = Broker.producer(bootstrap)) {
            for (int i = 0; i < messages; i++) {
                producer.send(Broker.message(topic, "b" + i, "v"));
            }
            producer.flush();
        }
        boolean postgres = "postgres".equals(System.getProperty("idempotency.kafka.bench.db"));
        try (HikariDataSource dataSource = postgres ? TestDatabases.postgres(4) : TestDatabases.h2("kafka-bench-" + UUID.randomUUID(), 4)) {
            Effects effects = new Effects(dataSource);
            if (postgres) {
                effects.clear();
            }
            List<String> lines = new ArrayList<>();
            double[] rates = new double[4];
            for (int round = 0; round < 2; round++) { // the first round warms up; the second is reported
                String r = "-r" + round;
                IdempotentConsumer<Connection, String, String> idem = consumer(effects, "idem-record" + r);
                IdempotentConsumer<Connection, String, String> idemBatch = consumer(effects, "idem-batch" + r);
                rates[0] = rate(bootstrap, topic, "bare-record" + r, messages, (kafka, records) -> bareRecords(dataSource, "bare-record" + r, kafka, records));
                rates[1] = rate(bootstrap, topic, "idem-record" + r, messages, idem::process);
                rates[2] = rate(bootstrap, topic, "bare-batch" + r, messages, (kafka, records) -> bareBatch(dataSource, "bare-batch" + r, kafka, records));
                rates[3] = rate(bootstrap, topic, "idem-batch" + r, messages, idemBatch::processBatch);
                for (String group : List.of("bare-record", "idem-record", "bare-batch", "idem-batch")) {
                    assertThat(effects.counts(group + r)).hasSize(messages).allSatisfy((id, n) -> assertThat(n).isEqualTo(1));
                }
            }
            lines.add(String.format("per record: bare %.0f msg/s, idempotent %.0f msg/s (%.2f x)", rates[0], rates[1], rates[1] / rates[0]));
            lines.add(String.format("per batch of 100: bare %.0f msg/s, idempotent %.0f msg/s (%.2f x)", rates[2], rates[3], rates[3] / rates[2]));
            lines.forEach(l -> System.out.println("ConsumerThroughputTest: " + messages + " messages, " + (postgres ? "PostgreSQL" : "H2")
                    + "; " + l));
        }
    }

    private static IdempotentConsumer<Connection, String, String> consumer(Effects effects, String group) {
        return IdempotentConsumer.<Connection, String, String>builder(effects.engine(), group,
                (tx, record) -> Effects.write(tx, group, record)).build();
    }

    /** @return the messages per second of one group reading the whole topic through {@code process} */
    private static double rate(String bootstrap, String topic, String group, int messages,
                               BiConsumer<KafkaConsumer<String, String>, ConsumerRecords<String, String>> process) {
        Properties config = Broker.consumerConfig(bootstrap, group);
        config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "100");
        int[] seen = {0};
        long started;
        try (KafkaConsumer<String, String> kafka = new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer())) {
            kafka.subscribe(List.of(topic));
            started = System.nanoTime();
            Broker.pollUntil(kafka, records -> {
                process.accept(kafka, records);
                seen[0] += records.count();
            }, () -> seen[0] >= messages);
        }
        return messages / ((System.nanoTime() - started) / 1e9);
    }

    /** The bare consumer per record: one transaction per record writing the same row, then the offsets. */
    private static void bareRecords(HikariDataSource dataSource, String group, KafkaConsumer<String, String> kafka,
                                    ConsumerRecords<String, String> records) {
        try {
            for (ConsumerRecord<String, String> record : records) {
                try (Connection c = dataSource.getConnection()) {
                    c.setAutoCommit(false);
                    Effects.write(c, group, record);
                    c.commit();
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        kafka.commitSync();
    }

    /** The bare consumer per batch: one transaction per poll writing the same rows, then the offsets. */
    private static void bareBatch(HikariDataSource dataSource, String group, KafkaConsumer<String, String> kafka,
                                  ConsumerRecords<String, String> records) {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            for (ConsumerRecord<String, String> record : records) {
                Effects.write(c, group, record);
            }
            c.commit();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        kafka.commitSync();
    }
}
