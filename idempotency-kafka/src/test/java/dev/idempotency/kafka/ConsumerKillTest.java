package dev.idempotency.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.testsupport.ChildJvm;
import dev.idempotency.testsupport.TestDatabases;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.h2.tools.Server;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Consumers in one group killed with SIGKILL at random moments and started again, over a real
 * broker, while a producer with retries sends, and sends some messages twice: every start and every
 * kill changes the group's members, so the group rebalances each time, partitions moving between
 * members mid-batch. Half the members process per record, half per poll batch. Afterwards, checked
 * from the database and the topic: exactly one effect per message id, none lost, the group's lag
 * back to zero, no key left in progress.
 *
 * <p>Every build: {@value #EVERY_BUILD_KILLS} kills of members, 2 at a time. Deep:
 * {@code -Didempotency.kafka.deep=true}, {@value #DEEP_KILLS} kills, 3 at a time; or any number
 * with {@code -Didempotency.kafka.kills=N}. The figures are printed at the end.
 */
class ConsumerKillTest {

    static final int EVERY_BUILD_KILLS = 8;
    static final int DEEP_KILLS = 300;
    static final boolean DEEP = Boolean.getBoolean("idempotency.kafka.deep");
    /** The longest a member lives after its first assignment before its kill, in ms. */
    static final int MAX_LIFE_MS = 2_500;

    @TempDir
    Path dir;

    @Test
    void killedAndRestartedMembersLeaveExactlyOneEffectPerMessageAndNoLag() throws Exception {
        String bootstrap = Broker.bootstrap();
        int target = Integer.getInteger("idempotency.kafka.kills", DEEP ? DEEP_KILLS : EVERY_BUILD_KILLS);
        int slots = DEEP ? 3 : 2;
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        Server h2 = Server.createTcpServer("-tcpPort", Integer.toString(port), "-ifNotExists", "-baseDir", Files.createDirectories(dir.resolve("h2")).toString()).start();
        try {
            String url = "jdbc:h2:tcp://127.0.0.1:" + port + "/kill;LOCK_TIMEOUT=10000";
            try (HikariDataSource dataSource = TestDatabases.pool(url, null, null, 4)) {
                run(bootstrap, url, dataSource, target, slots);
            }
        } finally {
            h2.stop();
        }
    }

    private void run(String bootstrap, String url, HikariDataSource dataSource, int target, int slots) throws Exception {
        Effects effects = new Effects(dataSource);
        String topic = Broker.newTopic(bootstrap, "kill", 6);
        String group = "kill-group";

        AtomicBoolean producing = new AtomicBoolean(true);
        List<String> sent = new ArrayList<>();
        AtomicInteger sentTwice = new AtomicInteger();
        Thread producer = new Thread(() -> {
            try (KafkaProducer<String, String> kafka = Broker.producer(bootstrap)) {
                for (int i = 0; producing.get(); i++) {
                    String id = "m" + i;
                    kafka.send(Broker.message(topic, id, "v")).get();
                    synchronized (sent) {
                        sent.add(id);
                    }
                    if (i % 10 == 3) { // the same message again: a producer that did not see its first send's answer
                        kafka.send(Broker.message(topic, id, "v")).get();
                        sentTwice.incrementAndGet();
                    }
                    Thread.sleep(ThreadLocalRandom.current().nextInt(15));
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, "producer");
        producer.start();

        ChildJvm.Killed killed;
        try {
            killed = ChildJvm.loop(slots, target, Long.MAX_VALUE, "member-", name -> {
                boolean batch = Integer.parseInt(name.substring("member-".length())) % 2 == 0;
                try (ChildJvm child = ChildJvm.startReady(name, 120, ConsumerChild.class,
                        List.of(bootstrap, url, group, topic, batch ? "batch" : "record"))) {
                    Thread.sleep(ThreadLocalRandom.current().nextInt(MAX_LIFE_MS + 1));
                    child.kill();
                }
            });
        } finally {
            producing.set(false);
            producer.join();
        }

        int byKilledMembers = effects.counts(group).size();
        assertThat(byKilledMembers).as("messages processed by the members that were killed").isPositive();
        // A last member, in this JVM, consumes what is left; it joins once the killed members' sessions end.
        IdempotentConsumer<Connection, String, String> last = IdempotentConsumer.<Connection, String, String>builder(effects.engine(),
                group, (tx, record) -> Effects.write(tx, group, record)).build();
        try (KafkaConsumer<String, String> kafka = Broker.consumer(bootstrap, group, topic)) {
            Broker.pollUntil(kafka, records -> last.process(kafka, records), () -> {
                try {
                    return Broker.lag(bootstrap, group, topic) == 0;
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
        }

        Map<String, Integer> counts = effects.counts(group);
        List<String> ids;
        synchronized (sent) {
            ids = List.copyOf(sent);
        }
        assertThat(counts.keySet()).as("every message processed, none lost").containsExactlyInAnyOrderElementsOf(ids);
        assertThat(counts).as("exactly one effect per message").allSatisfy((id, n) -> assertThat(n).as(id).isEqualTo(1));
        assertThat(Broker.lag(bootstrap, group, topic)).as("the group's lag").isZero();
        assertThat(effects.inProgress(group)).as("keys left in progress").isZero();
        System.out.printf("ConsumerKillTest: %d SIGKILLs of %d members (%d at a time), %d membership changes (joins and kills), "
                        + "%d messages (%d sent twice) on 6 partitions, %d processed before the last member, in %.1f s of killing; "
                        + "exactly one effect each, lag 0, no key in progress%n", killed.kills(), killed.children(), slots,
                killed.children() + killed.kills(), ids.size(), sentTwice.get(), byKilledMembers, killed.seconds());
    }
}
