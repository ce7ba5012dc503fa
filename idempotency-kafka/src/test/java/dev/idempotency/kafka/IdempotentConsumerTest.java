package dev.idempotency.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.KeyPolicy;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.RecordedFailureException;
import dev.idempotency.jdbc.Idempotent;
import dev.idempotency.jdbc.JdbcTransactions;
import dev.idempotency.testsupport.TestDatabases;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The consumer's promises over a real broker, one consumer at a time, on H2: second sends and
 * redeliveries replay and are told apart, each group processes each message, a poison message is
 * tried a bounded number of times and then recorded and dead-lettered, a batch keeps the other
 * records of a failing one, a record without a message id is dead-lettered, and the topic's lag
 * returns to zero.
 */
class IdempotentConsumerTest {

    private String bootstrap;
    private HikariDataSource dataSource;
    private Effects effects;
    private ManagedIdempotency<Connection> engine;
    private final List<String> deadLetters = Collections.synchronizedList(new ArrayList<>());
    private final Map<String, AtomicInteger> runs = Collections.synchronizedMap(new HashMap<>());

    @BeforeEach
    void setUp() throws Exception {
        bootstrap = Broker.bootstrap();
        dataSource = TestDatabases.h2("kafka-" + UUID.randomUUID(), 4);
        effects = new Effects(dataSource);
        engine = effects.engine();
    }

    @AfterEach
    void tearDown() {
        if (dataSource != null) {
            dataSource.close();
        }
    }

    /** A consumer whose handler writes an effect, and fails for message ids starting with "bad", or once for "flaky". */
    private IdempotentConsumer<Connection, String, String> consumer(String group, MessageIds<String, String> ids) {
        return IdempotentConsumer.<Connection, String, String>builder(engine, group, (tx, record) -> {
                    int run = runs.computeIfAbsent(record.key(), k -> new AtomicInteger()).incrementAndGet();
                    Effects.write(tx, group, record); // written first: a failure must roll it back
                    if (record.key().startsWith("bad") || (record.key().startsWith("flaky") && run == 1)) {
                        throw new IllegalStateException("cannot process " + record.key());
                    }
                })
                .messageIds(ids).maxAttempts(3)
                .deadLetters((record, reason) -> deadLetters.add(record.key() + " " + reason.getClass().getSimpleName()))
                .build();
    }

    private void send(String topic, List<ProducerRecord<String, String>> records) throws Exception {
        try (KafkaProducer<String, String> producer = Broker.producer(bootstrap)) {
            for (ProducerRecord<String, String> record : records) {
                producer.send(record).get();
            }
        }
    }

    private static List<ProducerRecord<String, String>> messages(String topic, String... ids) {
        List<ProducerRecord<String, String>> out = new ArrayList<>();
        for (String id : ids) {
            out.add(Broker.message(topic, id, "v-" + id));
        }
        return out;
    }

    /** Polls with {@code process} until the group has consumed the whole topic (its lag is zero). */
    private void consumeAll(String group, String topic, boolean batch, IdempotentConsumer<Connection, String, String> consumer)
            throws Exception {
        try (KafkaConsumer<String, String> kafka = Broker.consumer(bootstrap, group, topic)) {
            Broker.pollUntil(kafka, records -> {
                if (batch) {
                    consumer.processBatch(kafka, records);
                } else {
                    consumer.process(kafka, records);
                }
            }, () -> lag(group, topic) == 0);
        }
    }

    private long lag(String group, String topic) {
        try {
            return Broker.lag(bootstrap, group, topic);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private List<ConsumerRecord<String, String>> readAll(String topic, int expected) {
        return Broker.readAll(bootstrap, topic, expected);
    }

    @Test
    void aMessageSentTwiceRunsOnceAndIsHeardAsSentAgain() throws Exception {
        String topic = Broker.newTopic(bootstrap, "sent-twice", 3);
        List<ProducerRecord<String, String>> sends = messages(topic, "m1", "m2", "m3", "m4");
        sends.add(Broker.message(topic, "m3", "v-m3")); // the producer sends m3 again: another offset
        send(topic, sends);
        consumeAll("g1", topic, false, consumer("g1", MessageIds.header()));
        assertThat(effects.counts("g1")).containsOnly(Map.entry("m1", 1), Map.entry("m2", 1), Map.entry("m3", 1), Map.entry("m4", 1));
        assertThat(effects.duplicates()).containsExactly("m3 " + IdempotentConsumer.SENT_AGAIN);
        assertThat(effects.inProgress("g1")).isZero();
    }

    @Test
    void aRecordDeliveredAgainReplaysAndIsHeardAsRedelivered() throws Exception {
        String topic = Broker.newTopic(bootstrap, "redelivered", 2);
        send(topic, messages(topic, "a", "b", "c"));
        IdempotentConsumer<Connection, String, String> consumer = consumer("g1", MessageIds.header());
        for (ConsumerRecord<String, String> record : readAll(topic, 3)) { // processed, offsets never committed: a crash
            assertThat(consumer.handle(record).status()).isEqualTo(Outcome.Status.EXECUTED);
        }
        consumeAll("g1", topic, false, consumer); // the group's next member gets them all again
        assertThat(effects.counts("g1")).containsOnly(Map.entry("a", 1), Map.entry("b", 1), Map.entry("c", 1));
        assertThat(effects.duplicates()).containsExactlyInAnyOrder("a redelivered", "b redelivered", "c redelivered");
    }

    @Test
    void twoGroupsEachProcessEveryMessage() throws Exception {
        String topic = Broker.newTopic(bootstrap, "two-groups", 2);
        send(topic, messages(topic, "x", "y"));
        consumeAll("billing", topic, false, consumer("billing", MessageIds.header()));
        consumeAll("shipping", topic, true, consumer("shipping", MessageIds.header()));
        assertThat(effects.counts("billing")).containsOnly(Map.entry("x", 1), Map.entry("y", 1));
        assertThat(effects.counts("shipping")).containsOnly(Map.entry("x", 1), Map.entry("y", 1));
    }

    @Test
    void aPoisonMessageIsTriedMaxAttemptsThenRecordedAndDeadLetteredOnceAndItsRedeliveryReplaysTheFailure() throws Exception {
        String topic = Broker.newTopic(bootstrap, "poison", 1);
        send(topic, messages(topic, "ok-1", "bad-1", "flaky-1", "ok-2"));
        IdempotentConsumer<Connection, String, String> consumer = consumer("g1", MessageIds.header());
        consumeAll("g1", topic, false, consumer);
        assertThat(effects.errors()).as("the listener hears the handler's own failures").containsExactly(
                "bad-1 IllegalStateException: cannot process bad-1", "bad-1 IllegalStateException: cannot process bad-1",
                "flaky-1 IllegalStateException: cannot process flaky-1");
        assertThat(runs.get("bad-1")).hasValue(3);
        assertThat(runs.get("flaky-1")).hasValue(2);
        assertThat(effects.counts("g1")).containsOnly(Map.entry("ok-1", 1), Map.entry("flaky-1", 1), Map.entry("ok-2", 1));
        assertThat(deadLetters).containsExactly("bad-1 RecordedFailureException");

        ConsumerRecord<String, String> poison = readAll(topic, 4).get(1);
        Outcome<String> again = consumer.handle(poison); // delivered again, as after a crash before the offset commit
        assertThat(again).isInstanceOf(Outcome.Failed.class);
        assertThat(((Outcome.Failed<String>) again).replayed()).isTrue();
        assertThat(((Outcome.Failed<String>) again).errorType()).isEqualTo(PoisonMessageException.class.getName());
        assertThat(((Outcome.Failed<String>) again).errorMessage()).contains(IdempotentConsumer.position(poison)).contains("3 attempts")
                .contains("cannot process bad-1");
        assertThat(runs.get("bad-1")).as("the handler does not run again").hasValue(3);
        assertThat(deadLetters).as("a replayed failure is not handed off again").containsExactly("bad-1 RecordedFailureException");
        consumeAll("g2", topic, false, consumer("g1", MessageIds.header())); // the group's offsets reset: every record again
        assertThat(deadLetters).containsExactly("bad-1 RecordedFailureException");
        assertThat(effects.inProgress("g1")).isZero();
    }

    @Test
    void aDeadLetterHandOffThatDoesNotReturnRecordsNothingAndTheNextDeliveryHandsItOffAgain() throws Exception {
        String topic = Broker.newTopic(bootstrap, "hand-off", 1);
        send(topic, messages(topic, "bad-h"));
        AtomicInteger handOffs = new AtomicInteger();
        IdempotentConsumer<Connection, String, String> consumer = IdempotentConsumer.<Connection, String, String>builder(engine, "g1",
                        (tx, record) -> {
                            runs.computeIfAbsent(record.key(), k -> new AtomicInteger()).incrementAndGet();
                            throw new IllegalStateException("cannot process " + record.key());
                        })
                .maxAttempts(2)
                .deadLetters((record, reason) -> {
                    if (handOffs.incrementAndGet() == 1) {
                        throw new IllegalStateException("dead-letter topic unreachable"); // as a crash in the middle of the hand-off
                    }
                    deadLetters.add(record.key() + " " + reason.getClass().getSimpleName());
                })
                .build();
        ConsumerRecord<String, String> poison = readAll(topic, 1).get(0);
        assertThatThrownBy(() -> consumer.handle(poison)).hasMessage("dead-letter topic unreachable");
        assertThat(effects.statuses("g1")).as("no failure recorded before its hand-off returned").isEmpty();

        assertThat(consumer.handle(poison).status()).isEqualTo(Outcome.Status.FAILED); // delivered again
        assertThat(runs.get("bad-h")).as("its attempts run again").hasValue(4);
        assertThat(deadLetters).containsExactly("bad-h RecordedFailureException");
        assertThat(effects.statuses("g1")).containsOnly(Map.entry("bad-h", "FAILED"));
        assertThat(consumer.handle(poison).status()).isEqualTo(Outcome.Status.FAILED);
        assertThat(handOffs).as("handed off at least once, recorded once").hasValue(2);
    }

    @Test
    void aBatchIsOneChunkAFailingRecordKeepsTheOthersRecordsAndTheSameIdTwiceRunsOnce() throws Exception {
        String topic = Broker.newTopic(bootstrap, "batch", 1);
        List<ProducerRecord<String, String>> sends = messages(topic, "b1", "b2", "bad-b", "b3", "flaky-b", "b4");
        sends.add(Broker.message(topic, "b2", "v-b2")); // the same message again, in the same batch
        send(topic, sends);
        IdempotentConsumer<Connection, String, String> consumer = consumer("g1", MessageIds.header());
        List<ConsumerRecord<String, String>> batch = readAll(topic, 7);

        List<Outcome<String>> outcomes = consumer.handleBatch(batch);
        assertThat(outcomes).extracting(Outcome::status).containsExactly(Outcome.Status.EXECUTED, Outcome.Status.EXECUTED,
                Outcome.Status.FAILED, Outcome.Status.EXECUTED, Outcome.Status.EXECUTED, Outcome.Status.EXECUTED,
                Outcome.Status.REPLAYED); // the second b2 replays the first, as a second send does record by record
        assertThat(outcomes.get(6).value()).isEqualTo(IdempotentConsumer.position(batch.get(1)));
        assertThat(runs.get("bad-b")).hasValue(3);
        assertThat(effects.counts("g1")).containsOnly(Map.entry("b1", 1), Map.entry("b2", 1), Map.entry("b3", 1),
                Map.entry("flaky-b", 1), Map.entry("b4", 1));
        assertThat(effects.duplicates()).containsExactly("b2 " + IdempotentConsumer.SENT_AGAIN);
        assertThat(deadLetters).containsExactly("bad-b RecordedFailureException");
        assertThat(effects.outcomes()).as("every record's outcome is heard, the second b2 as a replay").containsExactlyInAnyOrder(
                "b1 EXECUTED", "b2 EXECUTED", "bad-b FAILED", "b3 EXECUTED", "flaky-b EXECUTED", "b4 EXECUTED", "b2 REPLAYED");
        assertThat(effects.errors()).as("the listener hears the handler's own failures").containsOnly(
                "b1 IllegalStateException: cannot process bad-b", "b1 IllegalStateException: cannot process flaky-b");

        Map<String, Integer> before = new HashMap<>();
        runs.forEach((k, v) -> before.put(k, v.get()));
        List<Outcome<String>> replayed = consumer.handleBatch(batch); // the whole batch delivered again
        assertThat(replayed).extracting(Outcome::status).containsExactly(Outcome.Status.REPLAYED, Outcome.Status.REPLAYED,
                Outcome.Status.FAILED, Outcome.Status.REPLAYED, Outcome.Status.REPLAYED, Outcome.Status.REPLAYED,
                Outcome.Status.REPLAYED);
        Map<String, Integer> after = new HashMap<>();
        runs.forEach((k, v) -> after.put(k, v.get()));
        assertThat(after).as("no handler ran again").isEqualTo(before);
        assertThat(deadLetters).as("a replayed failure is not handed off again").containsExactly("bad-b RecordedFailureException");
        assertThat(effects.counts("g1")).hasSize(5).allSatisfy((id, n) -> assertThat(n).isEqualTo(1));
        assertThat(effects.inProgress("g1")).isZero();
    }

    @Test
    void processBatchCommitsTheOffsetsAfterTheBatch() throws Exception {
        String topic = Broker.newTopic(bootstrap, "batches", 3);
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            ids.add("n" + i);
        }
        send(topic, messages(topic, ids.toArray(String[]::new)));
        consumeAll("g1", topic, true, consumer("g1", MessageIds.header()));
        assertThat(effects.counts("g1")).hasSize(60).allSatisfy((id, n) -> assertThat(n).isEqualTo(1));
    }

    @Test
    void thePositionAsIdReplaysARedeliveryButNotASecondSend() throws Exception {
        String topic = Broker.newTopic(bootstrap, "position", 1);
        send(topic, messages(topic, "p1", "p1"));
        IdempotentConsumer<Connection, String, String> consumer = consumer("g1", MessageIds.position());
        List<ConsumerRecord<String, String>> records = readAll(topic, 2);
        consumer.handle(records.get(0)); // processed, offset not committed
        consumeAll("g1", topic, false, consumer);
        assertThat(effects.counts("g1")).as("the second send is a new record").containsOnly(Map.entry("p1", 2));
        assertThat(effects.duplicates()).containsExactly(topic + "-0@0 " + IdempotentConsumer.REDELIVERED);
    }

    @Test
    void aRecordWithoutAMessageIdIsDeadLetteredAndItsOffsetCommitted() throws Exception {
        String topic = Broker.newTopic(bootstrap, "no-id", 1);
        send(topic, List.of(new ProducerRecord<>(topic, "anonymous", "v"), Broker.message(topic, "m", "v")));
        List<Exception> reasons = Collections.synchronizedList(new ArrayList<>());
        IdempotentConsumer<Connection, String, String> consumer = IdempotentConsumer.<Connection, String, String>builder(engine, "g1",
                        (tx, record) -> Effects.write(tx, "g1", record))
                .deadLetters((record, reason) -> {
                    deadLetters.add(record.key() + " " + reason.getClass().getSimpleName());
                    reasons.add(reason);
                })
                .build();
        consumeAll("g1", topic, false, consumer);
        assertThat(deadLetters).containsExactly("anonymous MissingMessageIdException");
        assertThat(effects.counts("g1")).containsOnly(Map.entry("m", 1));
        MissingMessageIdException missing = (MissingMessageIdException) reasons.get(0);
        assertThat(missing.getMessage()).doesNotContain("'null'").contains("no message id").contains("header 'idempotency-message-id'")
                .contains("topic '" + topic + "'").contains("partition 0").contains("offset 0").contains("Consumer group 'g1'");
        assertThat(missing.scope()).isEqualTo("g1");
        assertThat(missing.keyId()).isNull();
    }

    @Test
    void retriedByTheCallerAFailureReachesItUnrecordedUntilItRecordsTheFailureWhichThenReplays() throws Exception {
        String topic = Broker.newTopic(bootstrap, "by-caller", 1);
        send(topic, messages(topic, "bad-c", "ok-c"));
        IdempotentConsumer<Connection, String, String> consumer = IdempotentConsumer.<Connection, String, String>builder(engine, "g1",
                        (tx, record) -> {
                            runs.computeIfAbsent(record.key(), k -> new AtomicInteger()).incrementAndGet();
                            Effects.write(tx, "g1", record);
                            if (record.key().startsWith("bad")) {
                                throw new IllegalStateException("cannot process " + record.key());
                            }
                        })
                .retriedByCaller().deadLetters((record, reason) -> deadLetters.add(record.key())).build();
        List<ConsumerRecord<String, String>> records = readAll(topic, 2);
        ConsumerRecord<String, String> poison = records.get(0);
        for (int attempt = 1; attempt <= 2; attempt++) { // the caller's attempts
            assertThatThrownBy(() -> consumer.handle(poison)).isInstanceOf(IllegalStateException.class).hasMessage("cannot process bad-c");
        }
        assertThat(effects.counts("g1")).isEmpty();
        assertThat(effects.inProgress("g1")).isZero();

        Outcome<String> recorded = consumer.recordFailure(poison, 2, new IllegalStateException("cannot process bad-c"));
        assertThat(recorded).isInstanceOf(Outcome.Failed.class);
        assertThat(((Outcome.Failed<String>) recorded).errorMessage()).contains("2 attempts").contains("cannot process bad-c");
        Outcome<String> again = consumer.handle(poison);
        assertThat(again).isInstanceOf(Outcome.Failed.class);
        assertThat(((Outcome.Failed<String>) again).replayed()).isTrue();
        assertThat(runs.get("bad-c")).as("the handler does not run again").hasValue(2);
        assertThat(deadLetters).as("the caller dead-letters, not the consumer").isEmpty();

        assertThat(consumer.handle(records.get(1)).status()).isEqualTo(Outcome.Status.EXECUTED);
        assertThat(consumer.recordFailure(records.get(1), 1, new IllegalStateException("late")).status())
                .as("a recorded key keeps its record").isEqualTo(Outcome.Status.REPLAYED);
        assertThatThrownBy(() -> consumer.handleBatch(records)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("retriedByCaller()");
    }

    @Test
    void theBuilderRefusesAPolicyWithoutFinalPoisonMessagesAndABadGroup() {
        ManagedIdempotency<Connection> plain = ManagedIdempotency.of(Idempotent.builder().build(), JdbcTransactions.of(dataSource));
        RecordHandler<Connection, String, String> nothing = (tx, record) -> { };
        assertThatThrownBy(() -> IdempotentConsumer.builder(plain, "g", nothing).build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("PoisonMessageException").hasMessageContaining("finalFailures");
        assertThatThrownBy(() -> IdempotentConsumer.builder(engine, "g".repeat(KeyPolicy.DEFAULT_MAX_SCOPE_LENGTH + 1), nothing).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("consumer group");
        assertThatThrownBy(() -> IdempotentConsumer.builder(engine, "g", nothing).maxAttempts(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxAttempts");
        assertThat(RecordedFailureException.class).isNotNull();
    }
}
