package dev.idempotency.examples.charges;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.Outcome;
import dev.idempotency.RecoveryWorker;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The process that {@link ChargeCrashTest} kills: charges every operation of a list through
 * {@link ChargeService}, on two threads, until each one has its final answer, then exits 0. Each
 * answer is printed as a line for the test to read ({@code start op}, {@code done op STATUS value},
 * {@code busy op}, {@code error op message}). An operation whose key is held by the lease of a killed
 * predecessor is tried again once the lease has ended; any failure is retried after a pause.
 *
 * <p>Arguments: JDBC URL, user ({@code -} for none), password, the provider's address, the lease in
 * milliseconds, the key scope, and a file of operations, one a line: id, customer, card, cents,
 * separated by tabs. Two modes for {@link RecoveryWorkerCrashTest}: with an eighth argument
 * {@code once}, a client that tries each operation once and never again, whatever its answer; with
 * {@code worker} in place of the file, a node that runs the recovery worker (a pass every 50 ms)
 * until it is killed.
 */
public final class ChargeCrashChild {

    private ChargeCrashChild() {
    }

    /** One charge to make. */
    record Operation(String id, ChargeRequest request) {
        static Operation parse(String line) {
            String[] f = line.split("\t");
            return new Operation(f[0], new ChargeRequest(f[1], f[2], Long.parseLong(f[3])));
        }

        String line() {
            return id + "\t" + request.customer() + "\t" + request.card() + "\t" + request.cents();
        }
    }

    /**
     * @param args see the class comment
     * @throws Exception if the setup fails
     */
    public static void main(String[] args) throws Exception {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(args[0]);
        if (!"-".equals(args[1])) {
            config.setUsername(args[1]);
            config.setPassword(args[2]);
        }
        config.setMaximumPoolSize(4);
        Duration lease = Duration.ofMillis(Long.parseLong(args[4]));
        String scope = args[5];
        try (HikariDataSource dataSource = new HikariDataSource(config)) {
            ChargeService service = new ChargeService(dataSource, new PaymentProviderClient(URI.create(args[3]), Duration.ofSeconds(5)), lease);
            if (args[6].equals("worker")) {
                // Kills of workers mid-attempt count attempts too: let them never give a charge up here
                // (the most a worker allows, far more than the kills one charge can meet).
                RecoveryWorker<Connection> worker = service.recoveryWorker(Duration.ofMillis(50), 100);
                worker.start();
                say("ready");
                Thread.sleep(Long.MAX_VALUE);
            }
            boolean once = args.length > 7 && args[7].equals("once");
            List<Operation> operations = Files.readAllLines(Path.of(args[6])).stream().map(Operation::parse).toList();
            BlockingQueue<Operation> queue = new LinkedBlockingQueue<>(operations);
            CountDownLatch remaining = new CountDownLatch(operations.size());
            say("ready");
            Thread[] workers = new Thread[2];
            for (int w = 0; w < workers.length; w++) {
                workers[w] = new Thread(() -> work(service, scope, queue, remaining, once), "charges-" + w);
                workers[w].start();
            }
            remaining.await();
        }
        say("finished");
        System.exit(0);
    }

    private static void work(ChargeService service, String scope, BlockingQueue<Operation> queue, CountDownLatch remaining,
                             boolean once) {
        try {
            while (remaining.getCount() > 0) {
                Operation op = queue.poll(50, TimeUnit.MILLISECONDS);
                if (op == null) {
                    continue;
                }
                say("start " + op.id());
                Duration pause = Duration.ZERO;
                try {
                    Outcome<String> outcome = service.charge(IdempotencyKey.of(scope, op.id()), op.request());
                    if (outcome instanceof Outcome.Failed<String> failed) {
                        say("done " + op.id() + " FAILED " + failed.errorMessage());
                        remaining.countDown();
                        continue;
                    }
                    if (outcome instanceof Outcome.InProgress<String> busy) {
                        say("busy " + op.id());
                        // The lease of a killed attempt: take the key over once it has ended.
                        Instant until = busy.leaseUntil() == null ? Instant.now() : busy.leaseUntil();
                        pause = Duration.between(Instant.now(), until).plusMillis(5);
                    } else {
                        say("done " + op.id() + " " + outcome.status() + " " + (outcome.hasValue() ? outcome.value() : "-"));
                        remaining.countDown();
                        continue;
                    }
                } catch (Exception e) {
                    say("error " + op.id() + " " + e);
                    pause = Duration.ofMillis(20);
                }
                if (once) {
                    remaining.countDown(); // this client never comes back for it
                    continue;
                }
                Thread.sleep(Math.max(0, Math.min(pause.toMillis(), 2_000)));
                queue.add(op);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void say(String line) {
        synchronized (System.out) {
            System.out.println(line);
            System.out.flush();
        }
    }

    /** Writes the operations in the format {@link #main} reads. */
    static void write(Path file, List<Operation> operations) throws IOException {
        Files.write(file, operations.stream().map(Operation::line).toList());
    }
}
