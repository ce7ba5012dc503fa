package dev.idempotency.spring.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.kafka.Broker;
import dev.idempotency.kafka.Effects;
import dev.idempotency.kafka.IdempotentConsumer;
import dev.idempotency.kafka.PoisonMessageException;
import dev.idempotency.kafka.RecordHandler;
import dev.idempotency.spring.SpringTransactions;
import dev.idempotency.testsupport.TestDatabases;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.MapPropertySource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.kafka.annotation.EnableKafka;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.config.ConcurrentKafkaListenerContainerFactory;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.listener.DeadLetterPublishingRecoverer;

/**
 * {@code @KafkaListener} record and batch listeners over a real broker, in a Spring context on H2:
 * one effect per message with a message sent twice, a listener that throws after its write leaves
 * no effect and its record is tried again, a poison record retried by Spring's
 * {@code DefaultErrorHandler} ends on the dead-letter topic exactly once with its failure recorded
 * (a redelivery replays it), and two groups each process every message. One context for all: the
 * listeners consume while the tests read what they did.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SpringKafkaListenerTest {

    static final Map<String, AtomicInteger> RUNS = new ConcurrentHashMap<>();

    private final String bootstrap = Broker.bootstrap();
    private final String suffix = UUID.randomUUID().toString().substring(0, 8);
    private final String records = "records-" + suffix;
    private final String batches = "batches-" + suffix;
    private HikariDataSource dataSource;
    private AnnotationConfigApplicationContext context;
    private Effects effects;

    @BeforeAll
    void start() throws Exception {
        try (Admin admin = Broker.admin(bootstrap)) {
            admin.createTopics(List.of(new NewTopic(records, 2, (short) 1), new NewTopic(records + "-dlt", 2, (short) 1),
                    new NewTopic(batches, 1, (short) 1), new NewTopic(batches + "-dlt", 1, (short) 1))).all().get();
        }
        dataSource = TestDatabases.h2("spring-kafka-" + suffix, 4);
        effects = new Effects(dataSource);
        // Sent before the listeners start: each group reads the topics from the start.
        List<ProducerRecord<String, String>> sends = messages(records, "ok-1", "bad-1", "flaky-1", "ok-2", "m");
        sends.add(Broker.message(records, "m", "v-m")); // the producer sends m again: another offset
        List<ProducerRecord<String, String>> batch = messages(batches, "b1", "b2", "bad-b", "b3", "flaky-b", "b4");
        batch.add(Broker.message(batches, "b2", "v-b2"));
        sends.addAll(batch);
        try (KafkaProducer<String, String> producer = Broker.producer(bootstrap)) {
            for (ProducerRecord<String, String> record : sends) {
                producer.send(record).get();
            }
        }
        context = new AnnotationConfigApplicationContext();
        context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("test", Map.of("test.records", records,
                "test.batches", batches, "test.bootstrap", bootstrap)));
        context.getBeanFactory().registerSingleton("effects", effects);
        context.getBeanFactory().registerSingleton("dataSource", dataSource);
        context.register(Listeners.class);
        context.refresh();
        waitForLag("billing", records);
        waitForLag("shipping", records);
        waitForLag("batch", batches);
    }

    @AfterAll
    void stop() {
        if (context != null) {
            context.close();
        }
        if (dataSource != null) {
            dataSource.close();
        }
    }

    /** Waits until the group has consumed the whole topic (its lag is zero), or fails after {@link Broker#PATIENCE}. */
    private void waitForLag(String group, String topic) throws Exception {
        long deadline = System.nanoTime() + Broker.PATIENCE.toNanos();
        while (Broker.lag(bootstrap, group, topic) != 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("group " + group + " has not consumed " + topic + " after " + Broker.PATIENCE);
            }
            Thread.sleep(200);
        }
    }

    private static List<ProducerRecord<String, String>> messages(String topic, String... ids) {
        List<ProducerRecord<String, String>> out = new ArrayList<>();
        for (String id : ids) {
            out.add(Broker.message(topic, id, "v-" + id));
        }
        return out;
    }

    private List<ConsumerRecord<String, String>> readAll(String topic, int expected) {
        return Broker.readAll(bootstrap, topic, expected);
    }

    @Test
    void eachRecordListenerMessageHasOneEffectAndTheSecondSendIsHeardAsSentAgain() throws Exception {
        assertThat(effects.counts("billing")).containsOnly(Map.entry("ok-1", 1), Map.entry("flaky-1", 1), Map.entry("ok-2", 1),
                Map.entry("m", 1));
        assertThat(effects.duplicates()).contains("m " + IdempotentConsumer.SENT_AGAIN);
        assertThat(effects.inProgress("billing")).isZero();
    }

    @Test
    void aListenerThatThrowsAfterItsWriteLeavesNoEffectAndItsRecordIsTriedAgain() throws Exception {
        assertThat(RUNS.get("billing/flaky-1")).hasValue(2);
        assertThat(effects.counts("billing")).containsEntry("flaky-1", 1);
    }

    @Test
    void twoGroupsEachProcessEveryMessage() throws Exception {
        assertThat(effects.counts("shipping")).containsOnly(Map.entry("ok-1", 1), Map.entry("bad-1", 1), Map.entry("flaky-1", 1),
                Map.entry("ok-2", 1), Map.entry("m", 1));
    }

    @Test
    void aPoisonRecordIsRetriedByTheErrorHandlerThenRecordedAndOnTheDeadLetterTopicOnceAndItsRedeliveryReplays() throws Exception {
        assertThat(RUNS.get("billing/bad-1")).as("the error handler's attempts").hasValue(3);
        List<ConsumerRecord<String, String>> dead = readAll(records + "-dlt", 1);
        assertThat(dead).extracting(ConsumerRecord::key).containsExactly("bad-1");

        ConsumerRecord<String, String> poison = readAll(records, 6).stream().filter(r -> r.key().equals("bad-1")).findFirst().orElseThrow();
        IdempotentConsumer<Connection, String, String> billing = context.getBean(Listeners.RecordListener.class).billing;
        Outcome<String> again = billing.handle(poison); // delivered again, as after a crash before the offset commit
        assertThat(again).isInstanceOf(Outcome.Failed.class);
        Outcome.Failed<String> failed = (Outcome.Failed<String>) again;
        assertThat(failed.replayed()).isTrue();
        assertThat(failed.errorType()).isEqualTo(PoisonMessageException.class.getName());
        assertThat(failed.errorMessage()).contains(records + "-" + poison.partition() + "@" + poison.offset()).contains("3 attempts")
                .contains("cannot process bad-1");
        assertThat(RUNS.get("billing/bad-1")).as("the handler does not run again").hasValue(3);
        assertThat(readAll(records + "-dlt", 1)).as("nothing published again").hasSize(1);
        assertThat(effects.inProgress("billing")).isZero();
    }

    @Test
    void aBatchListenerIsOneChunkItsPoisonRecordIsDeadLetteredOnceAndTheOthersHaveOneEffectEach() throws Exception {
        assertThat(effects.counts("batch")).containsOnly(Map.entry("b1", 1), Map.entry("b2", 1), Map.entry("b3", 1),
                Map.entry("flaky-b", 1), Map.entry("b4", 1));
        assertThat(RUNS.get("batch/bad-b")).hasValue(3);
        assertThat(readAll(batches + "-dlt", 1)).extracting(ConsumerRecord::key).containsExactly("bad-b");
        assertThat(effects.duplicates()).contains("b2 " + IdempotentConsumer.SENT_AGAIN);
        assertThat(effects.inProgress("batch")).isZero();
    }

    /** The application: the engine through Spring's transaction manager, the listeners, the broker's factories. */
    @Configuration(proxyBeanMethods = false)
    @EnableKafka
    static class Listeners {

        @Bean
        DataSourceTransactionManager transactionManager(javax.sql.DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        JdbcTemplate jdbcTemplate(javax.sql.DataSource dataSource) {
            return new JdbcTemplate(dataSource);
        }

        @Bean
        SpringKafkaIdempotency springKafkaIdempotency(Effects effects, DataSourceTransactionManager transactionManager,
                javax.sql.DataSource dataSource) {
            ManagedIdempotency<Connection> engine = effects.engine(SpringTransactions.of(transactionManager, dataSource));
            return SpringKafkaIdempotency.of(engine);
        }

        @Bean
        DefaultKafkaConsumerFactory<String, String> consumerFactory(org.springframework.core.env.Environment env) {
            Map<String, Object> config = new HashMap<>();
            Broker.consumerConfig(env.getRequiredProperty("test.bootstrap"), "unused").forEach((k, v) -> config.put((String) k, v));
            config.remove("group.id");
            return new DefaultKafkaConsumerFactory<>(config, new StringDeserializer(), new StringDeserializer());
        }

        @Bean
        KafkaTemplate<String, String> kafkaTemplate(org.springframework.core.env.Environment env) {
            Map<String, Object> config = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, env.getRequiredProperty("test.bootstrap"),
                    ProducerConfig.ACKS_CONFIG, "all");
            return new KafkaTemplate<>(new DefaultKafkaProducerFactory<>(config, new StringSerializer(), new StringSerializer()));
        }

        // tag::factory[]
        @Bean
        ConcurrentKafkaListenerContainerFactory<String, String> kafkaListenerContainerFactory(
                DefaultKafkaConsumerFactory<String, String> consumerFactory, SpringKafkaIdempotency kafka,
                KafkaTemplate<String, String> template) {
            ConcurrentKafkaListenerContainerFactory<String, String> factory = new ConcurrentKafkaListenerContainerFactory<>();
            factory.setConsumerFactory(consumerFactory);
            // three attempts, then the record on <topic>-dlt and its failure recorded
            factory.setCommonErrorHandler(kafka.errorHandler(new DeadLetterPublishingRecoverer(template), 3, Duration.ZERO));
            return factory;
        }
        // end::factory[]

        @Bean
        ConcurrentKafkaListenerContainerFactory<String, String> batchFactory(DefaultKafkaConsumerFactory<String, String> consumerFactory) {
            ConcurrentKafkaListenerContainerFactory<String, String> factory = new ConcurrentKafkaListenerContainerFactory<>();
            factory.setConsumerFactory(consumerFactory);
            factory.setBatchListener(true);
            return factory;
        }

        @Bean
        RecordListener recordListener(SpringKafkaIdempotency kafka, JdbcTemplate jdbc) {
            return new RecordListener(kafka, jdbc);
        }

        @Bean
        BatchListener batchListener(SpringKafkaIdempotency kafka, JdbcTemplate jdbc, KafkaTemplate<String, String> template) {
            return new BatchListener(kafka, jdbc, template);
        }

        /** The effect, through the transaction's {@code JdbcTemplate}; fails for ids starting "bad", and once for "flaky". */
        static RecordHandler<Connection, String, String> handler(String group, JdbcTemplate jdbc, boolean failing) {
            return (tx, record) -> {
                int run = RUNS.computeIfAbsent(group + "/" + record.key(), k -> new AtomicInteger()).incrementAndGet();
                jdbc.update("INSERT INTO consumer_effect (grp, message_id, position) VALUES (?, ?, ?)", group, record.key(),
                        record.topic() + "-" + record.partition() + "@" + record.offset()); // written first: a failure rolls it back
                if (failing && (record.key().startsWith("bad") || (record.key().startsWith("flaky") && run == 1))) {
                    throw new IllegalStateException("cannot process " + record.key());
                }
            };
        }

        // tag::record-listener[]
        static class RecordListener {
            final IdempotentConsumer<Connection, String, String> billing;
            final IdempotentConsumer<Connection, String, String> shipping;

            RecordListener(SpringKafkaIdempotency kafka, JdbcTemplate jdbc) {
                billing = kafka.recordListener("billing", handler("billing", jdbc, true));
                shipping = kafka.recordListener("shipping", handler("shipping", jdbc, false));
            }

            @KafkaListener(topics = "${test.records}", groupId = "billing")
            void bill(ConsumerRecord<String, String> record) {
                billing.handle(record); // the handler's writes and the key's record in one transaction
            }

            @KafkaListener(topics = "${test.records}", groupId = "shipping")
            void ship(ConsumerRecord<String, String> record) {
                shipping.handle(record);
            }
        }
        // end::record-listener[]

        // tag::batch-listener[]
        static class BatchListener {
            final IdempotentConsumer<Connection, String, String> batch;

            BatchListener(SpringKafkaIdempotency kafka, JdbcTemplate jdbc, KafkaTemplate<String, String> template) {
                batch = kafka.batchListener("batch", handler("batch", jdbc, true))
                        .maxAttempts(3)
                        .deadLetters(SpringKafkaIdempotency.deadLetters(new DeadLetterPublishingRecoverer(template)))
                        .build();
            }

            @KafkaListener(topics = "${test.batches}", groupId = "batch", containerFactory = "batchFactory")
            void onBatch(List<ConsumerRecord<String, String>> records) {
                batch.handleBatch(records); // one transaction, one claim statement for the poll
            }
        }
        // end::batch-listener[]
    }
}
