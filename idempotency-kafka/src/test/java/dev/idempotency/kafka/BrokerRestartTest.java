package dev.idempotency.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.testsupport.TestDatabases;
import dev.idempotency.testsupport.TestEnvironment;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.Test;

/**
 * The broker restarted under load: a producer keeps sending (and sends some messages twice) and a
 * member keeps consuming while node 1 of the cluster is stopped and started again with
 * {@code scripts/kafka.sh stop-node 1} and {@code start-node 1} (on a single node, the whole
 * cluster: the group's coordinator and every partition leader go away). The member's offset commits
 * fail meanwhile, and it goes on. Afterwards: one effect per message, none lost, lag zero, no key in
 * progress.
 */
class BrokerRestartTest {

    @Test
    void aBrokerRestartedUnderLoadLeavesOneEffectPerMessageAndNoLag() throws Exception {
        String bootstrap = Broker.bootstrap();
        Path scripts = Path.of(System.getProperty("idempotency.kafka.scripts", "../scripts"));
        String own = run(scripts, "env");
        if (!own.contains("IDEMPOTENCY_KAFKA_BOOTSTRAP=" + bootstrap + "\n")) {
            TestEnvironment.unavailable("the broker at " + bootstrap + " is not the one scripts/kafka.sh runs (it says: " + own.strip()
                    + "), so this test cannot restart it");
        }
        try (HikariDataSource dataSource = TestDatabases.h2("kafka-restart-" + UUID.randomUUID(), 4)) {
            Effects effects = new Effects(dataSource);
            String topic = Broker.newTopic(bootstrap, "restart", 3);
            String group = "restart-group";
            IdempotentConsumer<Connection, String, String> consumer = IdempotentConsumer.<Connection, String, String>builder(
                    effects.engine(), group, (tx, record) -> Effects.write(tx, group, record)).build();

            AtomicBoolean producing = new AtomicBoolean(true);
            List<String> sent = new ArrayList<>();
            List<Throwable> failures = new ArrayList<>();
            Thread producer = new Thread(() -> {
                try (KafkaProducer<String, String> kafka = Broker.producer(bootstrap)) {
                    for (int i = 0; producing.get() || i < 200; i++) {
                        String id = "r" + i;
                        kafka.send(Broker.message(topic, id, "v")).get(); // retried across the restart
                        if (i % 10 == 3) {
                            kafka.send(Broker.message(topic, id, "v")).get();
                        }
                        synchronized (sent) {
                            sent.add(id);
                        }
                        Thread.sleep(5);
                    }
                } catch (Throwable t) {
                    synchronized (failures) {
                        failures.add(t);
                    }
                }
            }, "producer");
            AtomicBoolean consuming = new AtomicBoolean(true);
            AtomicInteger pollFailures = new AtomicInteger();
            Thread member = new Thread(() -> {
                try (KafkaConsumer<String, String> kafka = Broker.consumer(bootstrap, group, topic)) {
                    while (consuming.get()) {
                        try {
                            consumer.process(kafka, kafka.poll(java.time.Duration.ofMillis(200)));
                        } catch (RuntimeException e) {
                            pollFailures.incrementAndGet(); // the broker is down: sought back, go on
                        }
                    }
                }
            }, "member");
            producer.start();
            member.start();
            waitFor(() -> sentCount(sent) >= 100);
            script(scripts, "stop-node", "1");
            script(scripts, "start-node", "1");
            waitFor(() -> sentCount(sent) >= 200);
            producing.set(false);
            producer.join();
            assertThat(failures).as("the producer's failures").isEmpty();
            waitFor(() -> {
                try {
                    return Broker.lag(bootstrap, group, topic) == 0;
                } catch (Exception e) {
                    return false; // the broker may still be electing leaders
                }
            });
            consuming.set(false);
            member.join();

            Map<String, Integer> counts = effects.counts(group);
            assertThat(counts.keySet()).as("every message processed, none lost").containsExactlyInAnyOrderElementsOf(List.copyOf(sent));
            assertThat(counts).as("exactly one effect per message").allSatisfy((id, n) -> assertThat(n).as(id).isEqualTo(1));
            assertThat(effects.inProgress(group)).isZero();
            System.out.printf("BrokerRestartTest: %d messages, broker restarted after 100, %d polls failed meanwhile; "
                    + "one effect each, lag 0%n", counts.size(), pollFailures.get());
        }
    }

    private static int sentCount(List<String> sent) {
        synchronized (sent) {
            return sent.size();
        }
    }

    private static void waitFor(java.util.function.BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + Broker.PATIENCE.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not done after " + Broker.PATIENCE);
            }
            Thread.sleep(100);
        }
    }

    private static void script(Path scripts, String... args) throws Exception {
        run(scripts, args);
    }

    /** @return what {@code scripts/kafka.sh args} printed on its standard output; it must exit 0 */
    private static String run(Path scripts, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("bash", scripts.resolve("kafka.sh").toString()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as("scripts/kafka.sh " + String.join(" ", args)).isZero();
        return out;
    }
}
