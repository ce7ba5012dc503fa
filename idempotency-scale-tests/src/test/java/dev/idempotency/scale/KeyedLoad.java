package dev.idempotency.scale;

import dev.idempotency.Outcome;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Clients that send keyed requests without pause, as many application instances would: each client
 * thread sends one new key after another, and sends a key again (as a client does after an error or
 * a timeout) until it is acknowledged, that is, until the attempt returns {@code Executed} or
 * {@code Replayed}. The acknowledged keys, with the value the client was given, are what the
 * database must never forget.
 */
final class KeyedLoad {

    /** One attempt at a key: the n-th for that key, counted from 0 (a client may pick its server by it). */
    interface Attempt {
        Outcome<String> send(String key, int attempt) throws Exception;
    }

    /** A key the client was answered for. */
    record Ack(String key, String value, boolean replay, long atNanos) {
    }

    private final String scope;
    private final int clients;
    private final Attempt attempt;
    private final AtomicBoolean stopping = new AtomicBoolean();
    private final Map<String, Ack> acknowledged = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<String> abandoned = new ConcurrentLinkedQueue<>();
    private final AtomicInteger failedAttempts = new AtomicInteger();
    private final List<Thread> threads = new ArrayList<>();
    private final ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();

    KeyedLoad(String scope, int clients, Attempt attempt) {
        this.scope = scope;
        this.clients = clients;
        this.attempt = attempt;
    }

    KeyedLoad start() {
        for (int c = 0; c < clients; c++) {
            int client = c;
            Thread t = new Thread(() -> run(client), scope + "-client-" + c);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
        return this;
    }

    private void run(int client) {
        for (int i = 0; !stopping.get(); i++) {
            String key = scope + "-" + client + "-" + i;
            boolean done = false;
            for (int n = 0; !done; n++) {
                if (stopping.get()) {
                    abandoned.add(key);
                    return;
                }
                try {
                    Outcome<String> outcome = attempt.send(key, n);
                    if (outcome instanceof Outcome.Executed || outcome instanceof Outcome.Replayed) {
                        acknowledged.put(key, new Ack(key, outcome.value(), outcome.isReplay(), System.nanoTime()));
                        done = true;
                    } else {
                        pause(20); // InProgress: the first attempt's transaction is still open somewhere
                    }
                } catch (Exception e) {
                    if (failedAttempts.incrementAndGet() <= 5) {
                        failures.add(e);
                    }
                    pause(50);
                }
            }
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops the clients after their current attempt and waits for them. */
    KeyedLoad stop() throws InterruptedException {
        stopping.set(true);
        for (Thread t : threads) {
            t.join(120_000);
        }
        return this;
    }

    /** @return the keys acknowledged so far */
    Map<String, Ack> acknowledged() {
        return acknowledged;
    }

    /** @return keys sent but not acknowledged when the load stopped: each may or may not have run */
    List<String> abandoned() {
        return List.copyOf(abandoned);
    }

    /** @return attempts that threw (the client then sent the key again) */
    int failedAttempts() {
        return failedAttempts.get();
    }

    /** @return what the first few failed attempts threw, and why, to show what the clients saw */
    String failureKinds() {
        return failures.stream().map(f -> {
            Throwable root = f;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
            }
            return f.getClass().getSimpleName() + (root == f ? "" : " caused by " + root.getClass().getSimpleName());
        }).distinct().collect(java.util.stream.Collectors.joining(", "));
    }

    /** @return the longest time in milliseconds, between {@code fromNanos} and {@code toNanos}, in which no key was acknowledged */
    long longestPauseMillis(long fromNanos, long toNanos) {
        List<Long> times = new ArrayList<>();
        times.add(fromNanos);
        acknowledged.values().forEach(a -> {
            if (a.atNanos() > fromNanos && a.atNanos() < toNanos) {
                times.add(a.atNanos());
            }
        });
        times.add(toNanos);
        times.sort(null);
        long longest = 0;
        for (int i = 1; i < times.size(); i++) {
            longest = Math.max(longest, times.get(i) - times.get(i - 1));
        }
        return longest / 1_000_000;
    }
}
