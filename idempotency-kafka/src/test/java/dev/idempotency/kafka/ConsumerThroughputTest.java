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
 * ({@code -Didempotency.kafka.bench.messages=N}, 5000 by default, read by each of the four variants in
 * each of {@code -Didempotency.kafka.bench.rounds=R} rounds, 5 by default, after one round of warm-up;
 * on H2 in memory, or on the PostgreSQL server of the environment with
 * {@code -Didempotency.kafka.bench.db=postgres}). The variants run interleaved, each round starting
 * with another, and the ratios are taken within each round, so that a machine shared with other
 * work shifts both sides of a ratio alike. Prints, per record and per batch, the median rates and the
 * median and range of the ratios; asserts only that every variant wrote every message once.
 */
@EnabledIfSystemProperty(named = "idempotency.kafka.bench", matches = "true")
class ConsumerThroughputTest {

    @Test
    void idempotentAgainstBareConsumersPerRecordAndPerBatchOf100() throws Exception {
        String bootstrap = Broker.bootstrap();
        int messages = Integer.getInteger("idempotency.kafka.bench.messages", 5_000);
        int rounds = Integer.getInteger("idempotency.kafka.bench.rounds", 5);
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
            String[] variants = {"bare-record", "idem-record", "bare-batch", "idem-batch"};
            List<double[]> reported = new ArrayList<>();
            for (int round = 0; round <= rounds; round++) { // round 0 warms up and is not reported
                String r = "-r" + round;
                double[] rates = new double[4];
                for (int k = 0; k < 4; k++) {
                    int v = (k + round) % 4; // each round starts with another variant, so that no variant always runs first
                    String group = variants[v] + r;
                    rates[v] = switch (v) {
                        case 0 -> rate(bootstrap, topic, group, messages, (kafka, records) -> bareRecords(dataSource, group, kafka, records));
                        case 1 -> rate(bootstrap, topic, group, messages, consumer(effects, group)::process);
                        case 2 -> rate(bootstrap, topic, group, messages, (kafka, records) -> bareBatch(dataSource, group, kafka, records));
                        default -> rate(bootstrap, topic, group, messages, consumer(effects, group)::processBatch);
                    };
                    assertThat(effects.counts(group)).hasSize(messages).allSatisfy((id, n) -> assertThat(n).isEqualTo(1));
                }
                if (round > 0) {
                    reported.add(rates);
                }
            }
            for (int[] pair : new int[][] {{0, 1}, {2, 3}}) {
                double[] ratios = reported.stream().mapToDouble(x -> x[pair[1]] / x[pair[0]]).sorted().toArray();
                double[] bare = reported.stream().mapToDouble(x -> x[pair[0]]).sorted().toArray();
                double[] idem = reported.stream().mapToDouble(x -> x[pair[1]]).sorted().toArray();
                System.out.printf("ConsumerThroughputTest: %d messages x %d rounds, %s; %s: bare %.0f msg/s, idempotent %.0f msg/s"
                                + " (medians); ratio per round: median %.2f x, range %.2f-%.2f x%n", messages, rounds,
                        postgres ? "PostgreSQL" : "H2", pair[0] == 0 ? "per record" : "per batch of 100",
                        median(bare), median(idem), median(ratios), ratios[0], ratios[ratios.length - 1]);
            }
        }
    }

    private static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
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
