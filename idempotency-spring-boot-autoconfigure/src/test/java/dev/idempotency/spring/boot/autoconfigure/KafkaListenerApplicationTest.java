package dev.idempotency.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.Outcome;
import dev.idempotency.kafka.Broker;
import dev.idempotency.kafka.IdempotentConsumer;
import dev.idempotency.spring.kafka.SpringKafkaIdempotency;
import dev.idempotency.testsupport.SpringBootLine;
import java.sql.Connection;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.kafka.annotation.KafkaListener;

/**
 * A Boot application whose {@code @KafkaListener} uses only what the auto-configuration provides,
 * over the real broker: each message has one effect (one of them sent twice), and a poison record
 * is tried {@code idempotency.kafka.max-attempts} times, published to {@code <topic>-dlt} once and
 * its failure recorded, so that its redelivery replays it.
 */
class KafkaListenerApplicationTest {

    static final Map<String, AtomicInteger> RUNS = new ConcurrentHashMap<>();

    @Test
    void aListenerOnTheAutoConfiguredBeansHasOneEffectPerMessageAndDeadLettersItsPoisonRecordOnce() throws Exception {
        String bootstrap = Broker.bootstrap();
        String topic = "boot-" + UUID.randomUUID().toString().substring(0, 8);
        try (Admin admin = Broker.admin(bootstrap)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1), new NewTopic(topic + "-dlt", 1, (short) 1))).all().get();
        }
        try (KafkaProducer<String, String> producer = Broker.producer(bootstrap)) {
            for (String id : List.of("a", "bad", "b", "a")) { // a is sent twice
                producer.send(Broker.message(topic, id, "v-" + id)).get();
            }
        }
        Class<?> bootKafka = Class.forName(SpringBootLine.isBoot4() ? "org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration"
                : "org.springframework.boot.autoconfigure.kafka.KafkaAutoConfiguration");
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(SpringBootLine.jdbcAutoConfigurations()))
                .withConfiguration(AutoConfigurations.of(bootKafka, IdempotencyAutoConfiguration.class,
                        IdempotencyKafkaAutoConfiguration.class))
                .withUserConfiguration(Application.class)
                .withPropertyValues("spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
                        "spring.datasource.generate-unique-name=false", "idempotency.create-table=true",
                        "spring.kafka.bootstrap-servers=" + bootstrap, "spring.kafka.consumer.auto-offset-reset=earliest",
                        "idempotency.kafka.max-attempts=2", "test.topic=" + topic)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    long deadline = System.nanoTime() + Broker.PATIENCE.toNanos();
                    while (Broker.lag(bootstrap, "boot-billing", topic) != 0) {
                        assertThat(System.nanoTime()).as("the group consumed the topic in time").isLessThan(deadline);
                        Thread.sleep(200);
                    }
                    JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
                    assertThat(jdbc.queryForList("SELECT message_id FROM boot_effect ORDER BY message_id", String.class))
                            .containsExactly("a", "b");
                    assertThat(RUNS.get("bad")).as("idempotency.kafka.max-attempts").hasValue(2);
                    assertThat(Broker.readAll(bootstrap, topic + "-dlt", 1)).extracting(ConsumerRecord::key).containsExactly("bad");

                    ConsumerRecord<String, String> poison = Broker.readAll(bootstrap, topic, 4).get(1);
                    Outcome<String> again = context.getBean(Application.Payments.class).billing.handle(poison);
                    assertThat(again.status()).isEqualTo(Outcome.Status.FAILED);
                    assertThat(RUNS.get("bad")).as("the redelivery replays the recorded failure").hasValue(2);
                    assertThat(Broker.readAll(bootstrap, topic + "-dlt", 1)).as("nothing published again").hasSize(1);
                });
    }

    /** The application's own code: a listener bean and its table, nothing else. */
    @Configuration(proxyBeanMethods = false)
    static class Application {

        @Bean
        JdbcTemplate jdbcTemplate(DataSource dataSource) {
            return new JdbcTemplate(dataSource);
        }

        @Bean
        Payments payments(SpringKafkaIdempotency kafka, JdbcTemplate jdbc) {
            return new Payments(kafka, jdbc);
        }

        static class Payments {
            final IdempotentConsumer<Connection, String, String> billing;

            Payments(SpringKafkaIdempotency kafka, JdbcTemplate jdbc) {
                jdbc.execute("CREATE TABLE IF NOT EXISTS boot_effect (message_id VARCHAR(100) NOT NULL)");
                billing = kafka.recordListener("boot-billing", (tx, record) -> {
                    RUNS.computeIfAbsent(record.key(), k -> new AtomicInteger()).incrementAndGet();
                    jdbc.update("INSERT INTO boot_effect (message_id) VALUES (?)", record.key());
                    if (record.key().equals("bad")) {
                        throw new IllegalStateException("cannot process " + record.key());
                    }
                });
            }

            @KafkaListener(topics = "${test.topic}", groupId = "boot-billing")
            void on(ConsumerRecord<String, String> record) {
                billing.handle(record);
            }
        }
    }
}
