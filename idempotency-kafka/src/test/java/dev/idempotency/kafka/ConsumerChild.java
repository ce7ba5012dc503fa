package dev.idempotency.kafka;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.testsupport.ChildJvm;
import java.sql.Connection;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * A member of the consumer group of {@link ConsumerKillTest}, in a JVM of its own that the test kills
 * with SIGKILL: polls the topic and hands each poll to an {@link IdempotentConsumer} (per record, or
 * per batch), whose handler writes one effect row. Prints {@value ChildJvm#READY} once the group has
 * given it its first assignment, and runs until killed.
 *
 * <p>Arguments: bootstrap servers, JDBC URL, group, topic, {@code record} or {@code batch}.
 */
public final class ConsumerChild {

    private ConsumerChild() {
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String url = args[1];
        String group = args[2];
        String topic = args[3];
        boolean batch = args[4].equals("batch");
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(2);
        try (HikariDataSource dataSource = new HikariDataSource(config)) {
            Effects effects = new Effects(dataSource);
            IdempotentConsumer<Connection, String, String> consumer = IdempotentConsumer.<Connection, String, String>builder(
                    effects.engine(), group, (tx, record) -> Effects.write(tx, group, record)).build();
            try (KafkaConsumer<String, String> kafka = new KafkaConsumer<>(Broker.consumerConfig(bootstrap, group),
                    new StringDeserializer(), new StringDeserializer())) {
                boolean[] ready = {false};
                kafka.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                    @Override
                    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                        if (!ready[0]) {
                            ready[0] = true;
                            System.out.println(ChildJvm.READY);
                            System.out.flush();
                        }
                    }

                    @Override
                    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    }
                });
                while (true) {
                    var records = kafka.poll(Duration.ofMillis(200));
                    try {
                        if (batch) {
                            consumer.processBatch(kafka, records);
                        } else {
                            consumer.process(kafka, records);
                        }
                    } catch (RuntimeException e) {
                        System.out.println("poll failed, going on: " + e); // sought back: the next poll brings them again
                    }
                }
            }
        }
    }
}
