package dev.idempotency.examples.kafka;

import dev.idempotency.Idempotency;
import dev.idempotency.KeyPolicy;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.jdbc.Idempotent;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.jdbc.JdbcTransactions;
import dev.idempotency.kafka.IdempotentConsumer;
import dev.idempotency.kafka.JdbcOffsetStore;
import dev.idempotency.kafka.MessageIds;
import dev.idempotency.kafka.PoisonMessageException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import javax.sql.DataSource;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.h2.jdbcx.JdbcDataSource;

/**
 * Payments from a topic, booked once each. A producer sends five payment messages, each with a
 * message id in a header, and sends one of them twice (as a producer does that retries a send whose
 * answer it lost). A first consumer books two payments and dies before it commits any offset; the
 * group's next consumer gets every record again. With the idempotent consumer, each payment is
 * booked once: the second send and the redelivered records replay.
 *
 * <p>Run: {@code scripts/kafka.sh start}, then
 * {@code mvn -q -pl idempotency-examples -am compile exec:java -Dexec.mainClass=dev.idempotency.examples.kafka.PaymentsConsumer}
 * (the broker's address from {@code IDEMPOTENCY_KAFKA_BOOTSTRAP}, by default {@code 127.0.0.1:19092}).
 */
public final class PaymentsConsumer {

    private PaymentsConsumer() {
    }

    /** What a run did, for the test that runs it. */
    public record Run(int messagesSent, int paymentsBooked, Map<String, Integer> bookingsPerPayment) {
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = System.getenv().getOrDefault("IDEMPOTENCY_KAFKA_BOOTSTRAP", "127.0.0.1:19092");
        JdbcDataSource dataSource = new JdbcDataSource();
        dataSource.setURL("jdbc:h2:mem:payments-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        Run run = run(bootstrap, dataSource);
        System.out.printf("%d messages sent (one of them twice), two records delivered again, %d payments booked: %s%n",
                run.messagesSent(), run.paymentsBooked(), run.bookingsPerPayment());
    }

    /**
     * @param bootstrap the broker
     * @param dataSource an empty database
     * @return what it did
     */
    public static Run run(String bootstrap, DataSource dataSource) throws Exception {
        String topic = "payments-" + UUID.randomUUID();
        try (Admin admin = Admin.create(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        }
        JdbcIdempotencyStore.ofDefaults().createTableIfMissing(dataSource);
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE payment (payment_id VARCHAR(64) NOT NULL, cents BIGINT NOT NULL)"); // no unique key: a double booking shows
        }
        int sent = send(bootstrap, topic);

        // tag::consumer[]
        Idempotency<Connection> engine = Idempotent.builder()
                .keyPolicy(KeyPolicy.builder().finalFailures(PoisonMessageException.class).build()) // poison messages are recorded
                .build();
        ManagedIdempotency<Connection> managed = ManagedIdempotency.of(engine, JdbcTransactions.of(dataSource));
        IdempotentConsumer<Connection, String, String> payments = IdempotentConsumer.<Connection, String, String>builder(
                        managed, "bookkeeping", (tx, record) -> book(tx, record)) // the handler's writes share the key's transaction
                .messageIds(MessageIds.header()) // the producer's message id: a second send replays
                .maxAttempts(3)
                .deadLetters((record, reason) -> System.out.println("dead letter " + record.key() + ": " + reason.getMessage()))
                .build();
        // end::consumer[]

        try (KafkaConsumer<String, String> first = consumer(bootstrap)) {
            first.subscribe(List.of(topic));
            List<ConsumerRecord<String, String>> polled = pollAtLeast(first, sent + 1);
            for (ConsumerRecord<String, String> record : polled.subList(0, 2)) {
                payments.handle(record); // booked and committed; then this consumer dies before any offset commit
            }
        }
        try (KafkaConsumer<String, String> consumer = consumer(bootstrap)) {
            // tag::loop[]
            consumer.subscribe(List.of(topic));
            while (lag(consumer, topic) > 0) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(500));
                payments.process(consumer, records); // one transaction per record, then the offsets
            }
            // end::loop[]
        }
        Map<String, Integer> bookings = bookings(dataSource);
        return new Run(sent + 1, bookings.values().stream().mapToInt(Integer::intValue).sum(), bookings);
    }

    /** The business change: one booking row, in the transaction that records the message's key. */
    static void book(Connection tx, ConsumerRecord<String, String> record) throws SQLException {
        try (PreparedStatement insert = tx.prepareStatement("INSERT INTO payment (payment_id, cents) VALUES (?, ?)")) {
            insert.setString(1, record.key());
            insert.setLong(2, Long.parseLong(record.value()));
            insert.executeUpdate();
        }
    }

    private static int send(String bootstrap, String topic) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            for (int i = 1; i <= 5; i++) {
                producer.send(payment(topic, "pay-" + i, 100L * i)).get();
            }
            producer.send(payment(topic, "pay-3", 300)).get(); // the same message again, at another offset
        }
        return 5;
    }

    // tag::message[]
    static ProducerRecord<String, String> payment(String topic, String paymentId, long cents) {
        ProducerRecord<String, String> record = new ProducerRecord<>(topic, paymentId, Long.toString(cents));
        // One id per logical message, chosen before the first send, the same on every retry.
        record.headers().add(MessageIds.DEFAULT_HEADER, paymentId.getBytes(StandardCharsets.UTF_8));
        return record;
    }
    // end::message[]

    private static KafkaConsumer<String, String> consumer(String bootstrap) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "bookkeeping");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false"); // the idempotent consumer commits, after the transactions
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }

    private static List<ConsumerRecord<String, String>> pollAtLeast(KafkaConsumer<String, String> consumer, int n) {
        List<ConsumerRecord<String, String>> all = new java.util.ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (all.size() < n && System.nanoTime() < deadline) {
            consumer.poll(Duration.ofMillis(500)).forEach(all::add);
        }
        return all;
    }

    /** @return the records of the topic that the group has not committed yet */
    private static long lag(KafkaConsumer<String, String> consumer, String topic) {
        var partitions = consumer.partitionsFor(topic).stream()
                .map(p -> new org.apache.kafka.common.TopicPartition(topic, p.partition())).toList();
        var ends = consumer.endOffsets(partitions);
        var committed = consumer.committed(new java.util.HashSet<>(partitions));
        return partitions.stream().mapToLong(p -> ends.get(p) - (committed.get(p) == null ? 0 : committed.get(p).offset())).sum();
    }

    /** @return the bookings of each payment */
    private static Map<String, Integer> bookings(DataSource dataSource) throws SQLException {
        Map<String, Integer> out = new java.util.TreeMap<>();
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT payment_id, COUNT(*) FROM payment GROUP BY payment_id")) {
            while (rs.next()) {
                out.put(rs.getString(1), rs.getInt(2));
            }
        }
        return out;
    }

    /** The offsets-in-the-database setting, as the docs show it (not used by this run). */
    static IdempotentConsumer<Connection, String, String> withOffsetsInTheDatabase(ManagedIdempotency<Connection> managed,
                                                                                    DataSource dataSource, KafkaConsumer<String, String> consumer,
                                                                                    String topic) {
        // tag::offsets[]
        JdbcOffsetStore offsets = JdbcOffsetStore.of(dataSource);
        offsets.createTableIfMissing();
        IdempotentConsumer<Connection, String, String> payments = IdempotentConsumer.<Connection, String, String>builder(
                        managed, "bookkeeping", (tx, record) -> book(tx, record))
                .offsets(offsets) // each partition's next offset, in the transaction of each record
                .build();
        consumer.subscribe(List.of(topic), payments.rebalanceListener(consumer)); // seeks to them on assignment
        // end::offsets[]
        return payments;
    }
}
