package dev.idempotency.kafka;

import dev.idempotency.testsupport.TestEnvironment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The real broker of the tests, started by {@code scripts/kafka.sh} (which {@code scripts/test}
 * runs): its address from {@code IDEMPOTENCY_KAFKA_BOOTSTRAP}, topics of the test's own, producers
 * and consumers with the settings the tests share, and the group's lag read back from the broker.
 */
public final class Broker {

    public static final Duration PATIENCE = Duration.ofMinutes(2);

    private Broker() {
    }

    public static String bootstrap() {
        return TestEnvironment.require("IDEMPOTENCY_KAFKA_BOOTSTRAP",
                "start a broker with `scripts/kafka.sh start` and eval its export lines (scripts/test does both)");
    }

    public static Admin admin(String bootstrap) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
    }

    /** @return a new topic of {@code partitions} partitions, replicated as the cluster allows */
    public static String newTopic(String bootstrap, String prefix, int partitions) throws ExecutionException, InterruptedException {
        String topic = prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
        try (Admin admin = admin(bootstrap)) {
            int nodes = admin.describeCluster().nodes().get().size();
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) Math.min(nodes, 3)))).all().get();
        }
        return topic;
    }

    /**
     * A producer that retries its sends until they are acknowledged by every in-sync replica (its
     * idempotence, on by default, keeps those retries from writing a record twice; the tests send
     * a message twice on purpose to make a second send).
     */
    public static KafkaProducer<String, String> producer(String bootstrap) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.RETRIES_CONFIG, Integer.toString(Integer.MAX_VALUE));
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    public static ProducerRecord<String, String> message(String topic, String id, String value) {
        ProducerRecord<String, String> record = new ProducerRecord<>(topic, id, value);
        record.headers().add(MessageIds.DEFAULT_HEADER, id.getBytes(StandardCharsets.UTF_8));
        return record;
    }

    public static Properties consumerConfig(String bootstrap, String group) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "3000");
        p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500");
        return p;
    }

    public static KafkaConsumer<String, String> consumer(String bootstrap, String group, String topic) {
        KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerConfig(bootstrap, group), new StringDeserializer(),
                new StringDeserializer());
        consumer.subscribe(List.of(topic));
        return consumer;
    }

    /** Polls and hands each poll to {@code process} until {@code done}, or fails after {@link #PATIENCE}. */
    public static void pollUntil(KafkaConsumer<String, String> consumer, java.util.function.Consumer<org.apache.kafka.clients.consumer.ConsumerRecords<String, String>> process,
                          BooleanSupplier done) {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not done after " + PATIENCE + " of polling");
            }
            process.accept(consumer.poll(Duration.ofMillis(200)));
        }
    }

    /** Reads the whole topic without committing anything, until {@code expected} records came: the records as a redelivery would bring them. */
    public static List<org.apache.kafka.clients.consumer.ConsumerRecord<String, String>> readAll(String bootstrap, String topic, int expected) {
        List<org.apache.kafka.clients.consumer.ConsumerRecord<String, String>> all = new java.util.ArrayList<>();
        try (KafkaConsumer<String, String> kafka = consumer(bootstrap, "reader-" + UUID.randomUUID(), topic)) {
            pollUntil(kafka, records -> records.forEach(all::add), () -> all.size() >= expected);
        }
        return all;
    }

    /** @return the group's lag on the topic: the end offsets minus the committed ones, over every partition */
    public static long lag(String bootstrap, String group, String topic) throws ExecutionException, InterruptedException {
        try (Admin admin = admin(bootstrap)) {
            int partitions = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().size();
            Map<TopicPartition, OffsetSpec> latest = new java.util.HashMap<>();
            for (int p = 0; p < partitions; p++) {
                latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
            }
            Map<TopicPartition, Long> ends = admin.listOffsets(latest).all().get().entrySet().stream()
                    .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().offset()));
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            long lag = 0;
            for (Map.Entry<TopicPartition, Long> end : ends.entrySet()) {
                OffsetAndMetadata at = committed.get(end.getKey());
                lag += end.getValue() - (at == null ? 0 : at.offset());
            }
            return lag;
        }
    }
}
