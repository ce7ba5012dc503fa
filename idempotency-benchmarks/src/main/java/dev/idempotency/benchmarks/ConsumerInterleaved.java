package dev.idempotency.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Idempotency;
import dev.idempotency.KeyPolicy;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.jdbc.Idempotent;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.jdbc.JdbcTransactions;
import dev.idempotency.kafka.IdempotentConsumer;
import dev.idempotency.kafka.MessageIds;
import dev.idempotency.kafka.PoisonMessageException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Kafka consumers, interleaved the way {@link Interleaved} runs the database operations: messages
 * per second through {@link IdempotentConsumer} against a bare consumer that writes the same effect
 * row, on the broker named by {@code IDEMPOTENCY_KAFKA_BOOTSTRAP} and each database given.
 *
 * <ul>
 *   <li>{@code bareRecord}: one transaction per record writing the effect row, the offsets committed
 *       to Kafka after each poll;
 *   <li>{@code idempotentRecord}: {@link IdempotentConsumer#process}, one transaction per record;
 *   <li>{@code bareBatch}: one transaction per poll writing its rows, then the offsets;
 *   <li>{@code idempotentBatch}: {@link IdempotentConsumer#processBatch}, one transaction per poll.
 * </ul>
 *
 * <p>A topic of one partition is filled once with {@code --messages} messages; a run of a variant
 * reads all of them with a consumer of its own (a new group, the partition assigned, so that no
 * rebalance is timed), 100 a poll, timed from its first poll to its last record. Each round runs the
 * four in an order shuffled anew (the seed of {@link Interleaved}), after one round of warm-up; each
 * ratio is the median of the per-round ratios, so that a machine whose load changes weighs on both
 * sides alike. Beside the rate, the CPU time the whole client process spends per message (the
 * consumer's fetch threads and the pool's included) is reported: the client's share of the cost.
 *
 * <p>{@code java -cp benchmarks.jar dev.idempotency.benchmarks.ConsumerInterleaved [--db h2mem,postgresql,mariadb]
 * [--messages 5000] [--rounds 7] [--out consumers.tsv]}: one tab-separated line per database and
 * variant ({@code db, variant, median msg/s, median ratio to its bare variant, rounds, median client
 * CPU µs per message, median CPU ratio}), then one line per comparison with the range of its ratios.
 */
public final class ConsumerInterleaved {

    /** The variants, each with the bare one it is compared with. */
    static final List<String> VARIANTS = List.of("bareRecord", "idempotentRecord", "bareBatch", "idempotentBatch");

    private static final int POLL = 100;

    private ConsumerInterleaved() {
    }

    /**
     * @param args {@code --db list}, {@code --messages n}, {@code --rounds n}, {@code --out file}
     * @throws Exception if the broker or a database fails
     */
    public static void main(String[] args) throws Exception {
        String dbs = "h2mem,postgresql,mariadb";
        int messages = 5_000;
        int rounds = 7;
        Path out = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--db" -> dbs = args[++i];
                case "--messages" -> messages = Integer.parseInt(args[++i]);
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--out" -> out = Path.of(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]
                        + "; use --db h2mem,postgresql,mariadb --messages 5000 --rounds 7 --out consumers.tsv");
            }
        }
        String bootstrap = System.getenv("IDEMPOTENCY_KAFKA_BOOTSTRAP");
        if (bootstrap == null || bootstrap.isBlank()) {
            throw new IllegalStateException("IDEMPOTENCY_KAFKA_BOOTSTRAP is not set, so the consumers cannot be benchmarked:"
                    + " start a broker with scripts/kafka.sh start and export the line it prints");
        }
        String topic = fill(bootstrap, messages);
        List<String> lines = new ArrayList<>();
        for (String id : dbs.split(",")) {
            double before = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
            lines.addAll(run(Database.byId(id), bootstrap, topic, messages, rounds));
            System.err.printf(Locale.ROOT, "consumers on %s: %d rounds of %d messages a variant, load average %.2f before and %.2f after%n",
                    id, rounds, messages, before, ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        }
        if (out == null) {
            lines.forEach(System.out::println);
        } else {
            try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out, StandardCharsets.UTF_8))) {
                lines.forEach(w::println);
            }
        }
    }

    /** @return a new topic of one partition holding {@code messages} messages, each with its message-id header */
    static String fill(String bootstrap, int messages) throws Exception {
        String topic = "bench-consumers-" + UUID.randomUUID().toString().substring(0, 8);
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        }
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < messages; i++) {
                String id = "m" + i;
                ProducerRecord<String, String> record = new ProducerRecord<>(topic, id, "v");
                record.headers().add(MessageIds.DEFAULT_HEADER, id.getBytes(StandardCharsets.UTF_8));
                producer.send(record);
            }
            producer.flush();
        }
        return topic;
    }

    /**
     * @return the lines of one database: one per variant, then {@code idempotentRecord÷bareRecord}
     *     and {@code idempotentBatch÷bareBatch} with the range of their per-round ratios
     */
    static List<String> run(Database database, String bootstrap, String topic, int messages, int rounds) throws Exception {
        Path dir = Files.createTempDirectory("bench-consumers");
        try (HikariDataSource pool = database.pool(dir)) {
            Effects effects = new Effects(pool);
            double[][] rates = new double[VARIANTS.size()][rounds];
            double[][] cpu = new double[VARIANTS.size()][rounds];
            Random random = new Random(Interleaved.SEED);
            List<Integer> order = new ArrayList<>(List.of(0, 1, 2, 3));
            for (int r = -1; r < rounds; r++) { // round -1 warms up and is not kept
                Collections.shuffle(order, random);
                for (int v : order) {
                    String group = VARIANTS.get(v) + "-" + UUID.randomUUID().toString().substring(0, 8);
                    double[] cpuMicros = new double[1];
                    double rate = rate(effects, VARIANTS.get(v), bootstrap, topic, group, messages, cpuMicros);
                    effects.checkOnceEach(group, messages);
                    if (r >= 0) {
                        rates[v][r] = rate;
                        cpu[v][r] = cpuMicros[0];
                    }
                }
                effects.clear();
            }
            List<String> lines = new ArrayList<>();
            for (int v = 0; v < VARIANTS.size(); v++) {
                int bare = v - v % 2;
                // a rate's ratio is the other way round from a time's: idempotent ÷ bare messages per second
                lines.add(String.join("\t", database.id(), VARIANTS.get(v), String.format(Locale.ROOT, "%.0f", Interleaved.median(rates[v])),
                        String.format(Locale.ROOT, "%.3f", Interleaved.medianRatio(rates[v], rates[bare])), Integer.toString(rounds),
                        String.format(Locale.ROOT, "%.1f", Interleaved.median(cpu[v])),
                        String.format(Locale.ROOT, "%.3f", Interleaved.medianRatio(cpu[v], cpu[bare]))));
            }
            for (int v : new int[] {1, 3}) {
                double[] ratios = new double[rounds];
                for (int r = 0; r < rounds; r++) {
                    ratios[r] = rates[v][r] / rates[v - 1][r];
                }
                Arrays.sort(ratios);
                lines.add(String.join("\t", database.id(), VARIANTS.get(v) + "÷" + VARIANTS.get(v - 1), "-",
                        String.format(Locale.ROOT, "%.3f", Interleaved.median(ratios)), Integer.toString(rounds), "-",
                        String.format(Locale.ROOT, "range %.2f-%.2f", ratios[0], ratios[rounds - 1])));
            }
            return lines;
        }
    }

    /** @return the messages per second of one consumer reading the whole topic; its process CPU µs per message into {@code cpuMicros[0]} */
    private static double rate(Effects effects, String variant, String bootstrap, String topic, String group, int messages,
                               double[] cpuMicros) throws Exception {
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, Integer.toString(POLL));
        IdempotentConsumer<Connection, String, String> idempotent = IdempotentConsumer.<Connection, String, String>builder(
                effects.engine, group, (tx, record) -> Effects.write(tx, group, record)).build();
        TopicPartition partition = new TopicPartition(topic, 0);
        try (KafkaConsumer<String, String> kafka = new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer())) {
            kafka.assign(List.of(partition));
            kafka.seekToBeginning(List.of(partition));
            int seen = 0;
            long started = 0;
            long cpuStarted = 0;
            long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
            while (seen < messages) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(variant + " read " + seen + " of " + messages + " messages in 10 minutes");
                }
                if (started == 0) {
                    started = System.nanoTime();
                    cpuStarted = processCpuNanos();
                }
                ConsumerRecords<String, String> records = kafka.poll(Duration.ofMillis(200));
                switch (variant) {
                    case "bareRecord" -> effects.bareRecords(group, kafka, records);
                    case "idempotentRecord" -> idempotent.process(kafka, records);
                    case "bareBatch" -> effects.bareBatch(group, kafka, records);
                    case "idempotentBatch" -> idempotent.processBatch(kafka, records);
                    default -> throw new IllegalArgumentException("unknown variant " + variant);
                }
                seen += records.count();
            }
            long elapsed = System.nanoTime() - started;
            cpuMicros[0] = (processCpuNanos() - cpuStarted) / 1000.0 / messages;
            return messages / (elapsed / 1e9);
        }
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /** The business side: a table of effect rows (no unique constraint, so that a second effect shows), and the engine. */
    private static final class Effects {

        private final HikariDataSource pool;
        private final ManagedIdempotency<Connection> engine;

        Effects(HikariDataSource pool) throws SQLException {
            this.pool = pool;
            JdbcIdempotencyStore.ofDefaults().createTableIfMissing(pool);
            try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
                s.execute("CREATE TABLE IF NOT EXISTS bench_consumer_effect (grp VARCHAR(100) NOT NULL, message_id VARCHAR(100) NOT NULL,"
                        + " position VARCHAR(100) NOT NULL)");
                c.commit();
            }
            clear();
            Idempotency<Connection> idempotency = Idempotent.builder()
                    .keyPolicy(KeyPolicy.builder().finalFailures(PoisonMessageException.class).build()).build();
            this.engine = ManagedIdempotency.of(idempotency, JdbcTransactions.of(pool));
        }

        /** Empties the effects and the records between rounds, so that every round writes into tables of the same size. */
        void clear() throws SQLException {
            try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
                s.execute("DELETE FROM bench_consumer_effect");
                s.execute("DELETE FROM idempotency_record");
                c.commit();
            }
        }

        static void write(Connection tx, String group, ConsumerRecord<String, String> record) throws SQLException {
            try (PreparedStatement insert = tx.prepareStatement("INSERT INTO bench_consumer_effect (grp, message_id, position) VALUES (?, ?, ?)")) {
                insert.setString(1, group);
                insert.setString(2, record.key());
                insert.setString(3, record.topic() + "-" + record.partition() + "@" + record.offset());
                insert.executeUpdate();
            }
        }

        void bareRecords(String group, KafkaConsumer<String, String> kafka, ConsumerRecords<String, String> records) throws SQLException {
            for (ConsumerRecord<String, String> record : records) {
                try (Connection c = pool.getConnection()) {
                    write(c, group, record);
                    c.commit();
                }
            }
            kafka.commitSync();
        }

        void bareBatch(String group, KafkaConsumer<String, String> kafka, ConsumerRecords<String, String> records) throws SQLException {
            try (Connection c = pool.getConnection()) {
                for (ConsumerRecord<String, String> record : records) {
                    write(c, group, record);
                }
                c.commit();
            }
            kafka.commitSync();
        }

        /** @throws IllegalStateException unless the group wrote each of the messages exactly once */
        void checkOnceEach(String group, int messages) throws SQLException {
            try (Connection c = pool.getConnection();
                 PreparedStatement q = c.prepareStatement("SELECT COUNT(*), COUNT(DISTINCT message_id) FROM bench_consumer_effect WHERE grp = ?")) {
                q.setString(1, group);
                try (ResultSet rs = q.executeQuery()) {
                    rs.next();
                    if (rs.getInt(1) != messages || rs.getInt(2) != messages) {
                        throw new IllegalStateException(group + " wrote " + rs.getInt(1) + " effects of " + rs.getInt(2)
                                + " messages, where each of the " + messages + " should have one");
                    }
                }
                c.rollback();
            }
        }
    }
}
