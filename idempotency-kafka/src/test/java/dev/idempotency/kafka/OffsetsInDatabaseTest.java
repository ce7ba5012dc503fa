package dev.idempotency.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.testsupport.TestDatabases;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Offsets kept in the database: a member that dies after its records' commits and before any offset
 * commit to Kafka leaves the next member nothing to redeliver, since it seeks to the stored offsets;
 * without them the same crash redelivers (and the keys replay).
 */
class OffsetsInDatabaseTest {

    private String bootstrap;
    private HikariDataSource dataSource;
    private Effects effects;
    private ManagedIdempotency<Connection> engine;
    private JdbcOffsetStore offsets;
    private final List<String> runs = Collections.synchronizedList(new ArrayList<>());

    @BeforeEach
    void setUp() throws Exception {
        bootstrap = Broker.bootstrap();
        dataSource = TestDatabases.h2("kafka-offsets-" + UUID.randomUUID(), 4);
        effects = new Effects(dataSource);
        engine = effects.engine();
        offsets = JdbcOffsetStore.of(dataSource);
        offsets.createTableIfMissing();
    }

    @AfterEach
    void tearDown() {
        if (dataSource != null) {
            dataSource.close();
        }
    }

    private IdempotentConsumer<Connection, String, String> consumer(String group, boolean inDatabase) {
        IdempotentConsumer.Builder<Connection, String, String> b = IdempotentConsumer.builder(engine, group, (tx, record) -> {
            runs.add(record.key());
            Effects.write(tx, group, record);
        });
        return inDatabase ? b.offsets(offsets).build() : b.build();
    }

    /** @return a member of the group, subscribed with the consumer's rebalance listener if offsets are in the database */
    private KafkaConsumer<String, String> subscribed(String group, String topic, IdempotentConsumer<Connection, String, String> consumer,
                                                     boolean inDatabase) {
        KafkaConsumer<String, String> kafka = new KafkaConsumer<>(Broker.consumerConfig(bootstrap, group), new StringDeserializer(),
                new StringDeserializer());
        if (inDatabase) {
            kafka.subscribe(List.of(topic), consumer.rebalanceListener(kafka));
        } else {
            kafka.subscribe(List.of(topic));
        }
        return kafka;
    }

    /** The first member processes three records, commits their transactions, and dies before any offset commit to Kafka. */
    private void firstMemberDiesAfterThree(String group, String topic, IdempotentConsumer<Connection, String, String> consumer,
                                           boolean inDatabase) {
        List<ConsumerRecord<String, String>> seen = new ArrayList<>();
        try (KafkaConsumer<String, String> kafka = subscribed(group, topic, consumer, inDatabase)) {
            Broker.pollUntil(kafka, records -> records.forEach(seen::add), () -> seen.size() >= 6);
        }
        for (ConsumerRecord<String, String> record : seen.subList(0, 3)) {
            consumer.handle(record);
        }
    }

    private void nextMemberConsumesAll(String group, String topic, IdempotentConsumer<Connection, String, String> consumer,
                                       boolean inDatabase) {
        try (KafkaConsumer<String, String> kafka = subscribed(group, topic, consumer, inDatabase)) {
            Broker.pollUntil(kafka, records -> consumer.process(kafka, records), () -> {
                try {
                    return Broker.lag(bootstrap, group, topic) == 0;
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
        }
    }

    private String topicOfSix() throws Exception {
        String topic = Broker.newTopic(bootstrap, "offsets", 1);
        try (KafkaProducer<String, String> producer = Broker.producer(bootstrap)) {
            for (int i = 0; i < 6; i++) {
                producer.send(Broker.message(topic, "o" + i, "v")).get();
            }
        }
        return topic;
    }

    @Test
    void withOffsetsInTheDatabaseTheNextMemberStartsAfterTheLastCommittedRecordAndNothingIsRedelivered() throws Exception {
        String topic = topicOfSix();
        IdempotentConsumer<Connection, String, String> consumer = consumer("g1", true);
        firstMemberDiesAfterThree("g1", topic, consumer, true);
        nextMemberConsumesAll("g1", topic, consumer, true);
        assertThat(runs).containsExactly("o0", "o1", "o2", "o3", "o4", "o5");
        assertThat(effects.duplicates()).as("nothing delivered again").isEmpty();
        assertThat(offsets.load("g1", List.of(new TopicPartition(topic, 0)))).containsEntry(new TopicPartition(topic, 0), 6L);
    }

    @Test
    void withOffsetsInKafkaOnlyTheSameCrashRedeliversAndTheKeysReplay() throws Exception {
        String topic = topicOfSix();
        IdempotentConsumer<Connection, String, String> consumer = consumer("g1", false);
        firstMemberDiesAfterThree("g1", topic, consumer, false);
        nextMemberConsumesAll("g1", topic, consumer, false);
        assertThat(runs).containsExactly("o0", "o1", "o2", "o3", "o4", "o5");
        assertThat(effects.duplicates()).containsExactly("o0 redelivered", "o1 redelivered", "o2 redelivered");
    }

    @Test
    void aStoredOffsetNeverMovesBackAndTheListenerNeedsAStore() throws Exception {
        TopicPartition p = new TopicPartition("t", 3);
        assertThat(offsets.load("g", List.of(p))).isEmpty(); // the row is created, with no offset
        try (Connection tx = dataSource.getConnection()) {
            offsets.save(tx, "g", p, 10);
            offsets.save(tx, "g", p, 5); // a member that lost the partition, late
        }
        assertThat(offsets.load("g", List.of(p))).isEqualTo(Map.of(p, 10L));
        assertThatThrownBy(() -> consumer("g", false).rebalanceListener(null)).isInstanceOf(NullPointerException.class);
        try (KafkaConsumer<String, String> kafka = Broker.consumer(bootstrap, "g", "t")) {
            assertThatThrownBy(() -> consumer("g", false).rebalanceListener(kafka)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("offsets(");
        }
        assertThatThrownBy(() -> JdbcOffsetStore.of(dataSource, "x; DROP TABLE y")).isInstanceOf(IllegalArgumentException.class);
    }
}
