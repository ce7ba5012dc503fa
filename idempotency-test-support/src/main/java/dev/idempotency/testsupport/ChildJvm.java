package dev.idempotency.testsupport;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A child JVM of the kill tests: runs a main class on the test's own class path, is waited for
 * until it prints a line {@value #READY} (what it printed before is kept for the error, should it
 * end first), then has its output drained, and is killed with SIGKILL, as a crash of its machine
 * would end it. Not thread-safe: one owner per child.
 */
public final class ChildJvm implements AutoCloseable {

    /** The line a child prints once it works. */
    public static final String READY = "ready";

    private final String name;
    private final Process process;

    private ChildJvm(String name, Process process) {
        this.name = name;
        this.process = process;
    }

    /**
     * Starts {@code main} with {@code args} in a small JVM (C1 only, serial GC, 128 MB heap, SLF4J
     * Simple at warn) and waits until it prints {@value #READY}.
     *
     * @param name the child's name, for messages
     * @param readySeconds how long it may take to be ready before it is killed and the test fails
     * @param main the main class, on the current class path
     * @param args its arguments
     * @return the running child, its output drained
     * @throws IOException if it cannot be started
     * @throws InterruptedException if interrupted while waiting
     * @throws AssertionError if it ends, or is not ready in time, before it is ready, with what it printed
     */
    public static ChildJvm startReady(String name, int readySeconds, Class<?> main, List<String> args)
            throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command(128, main, args)).redirectErrorStream(true).start();
        ChildJvm child = new ChildJvm(name, process);
        Thread watchdog = new Thread(() -> {
            try {
                if (!process.waitFor(readySeconds, TimeUnit.SECONDS)) {
                    process.destroyForcibly(); // not ready in time: its output ends, and the wait below fails
                }
            } catch (InterruptedException ready) {
                // the child was ready
            }
        }, "ready-watchdog-" + name);
        watchdog.setDaemon(true);
        watchdog.start();
        BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        boolean ready = false;
        try {
            String line;
            List<String> noise = new ArrayList<>();
            while ((line = out.readLine()) != null && !line.equals(READY)) {
                if (noise.size() < 40) {
                    noise.add(line);
                }
            }
            if (line == null) {
                throw new AssertionError("child " + name + " ended before it was ready (or was not ready within " + readySeconds
                        + " s), exit " + process.waitFor() + ":\n" + String.join("\n", noise));
            }
            ready = true;
        } finally {
            watchdog.interrupt();
            if (!ready) {
                process.destroyForcibly();
            }
        }
        Thread drain = new Thread(() -> {
            try {
                while (out.readLine() != null) {
                    // keep the pipe flowing until the kill
                }
            } catch (IOException killed) {
                // the stream ends with the process
            }
        }, "drain-" + name);
        drain.setDaemon(true);
        drain.start();
        return child;
    }

    /**
     * The command line of a child JVM: this JVM's {@code java}, the test's own class path, C1 only,
     * the serial GC, a heap of {@code heapMegabytes}, SLF4J Simple at warn, then {@code main} and its
     * arguments.
     *
     * @param heapMegabytes the maximum heap, in MB
     * @param main the main class, on the current class path
     * @param args its arguments
     * @return a new, modifiable list
     */
    public static List<String> command(int heapMegabytes, Class<?> main, List<String> args) {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                "-Xmx" + heapMegabytes + "m", "-Xshare:auto", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", main.getName()));
        command.addAll(args);
        return command;
    }

    /**
     * Kills the child with SIGKILL and waits for its end.
     *
     * @throws InterruptedException if interrupted while waiting
     * @throws AssertionError if it survives for 30 s
     */
    public void kill() throws InterruptedException {
        process.destroyForcibly(); // SIGKILL on Linux
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new AssertionError("child " + name + " survived SIGKILL");
        }
    }

    /** One life of the kill loop: start the child named, let it work, kill it. */
    @FunctionalInterface
    public interface Life {
        /**
         * @param name the child's name, unique in the loop
         * @throws Exception any failure: the loop ends and fails
         */
        void live(String name) throws Exception;
    }

    /**
     * What a kill loop did.
     *
     * @param kills the SIGKILLs made
     * @param children the child JVMs started
     * @param seconds how long the loop took
     */
    public record Killed(int kills, int children, double seconds) {
    }

    /**
     * The kill loop: each of {@code slots} threads runs {@code life} for child after child (named
     * {@code prefix} and a number), until {@code target} kills are made or {@code limitNanos} have
     * passed.
     *
     * @return what was done
     * @throws AssertionError if a life failed, with the failures
     * @throws InterruptedException if interrupted while waiting for the slots
     */
    public static Killed loop(int slots, int target, long limitNanos, String prefix, Life life) throws InterruptedException {
        long started = System.nanoTime();
        AtomicInteger kills = new AtomicInteger();
        AtomicInteger children = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = new ArrayList<>();
        for (int s = 0; s < slots; s++) {
            Thread slot = new Thread(() -> {
                try {
                    while (kills.get() < target && System.nanoTime() - started < limitNanos) {
                        life.live(prefix + children.incrementAndGet());
                        kills.incrementAndGet();
                    }
                } catch (Throwable t) {
                    synchronized (failures) {
                        failures.add(t);
                    }
                }
            }, "kill-slot-" + s);
            slot.start();
            threads.add(slot);
        }
        for (Thread slot : threads) {
            slot.join();
        }
        if (!failures.isEmpty()) {
            AssertionError failed = new AssertionError("failures of the kill loop: " + failures);
            failures.forEach(failed::addSuppressed);
            throw failed;
        }
        return new Killed(kills.get(), children.get(), (System.nanoTime() - started) / 1e9);
    }

    /** @return whether the child still runs */
    public boolean isAlive() {
        return process.isAlive();
    }

    /** Kills the child if it still runs. */
    @Override
    public void close() {
        process.destroyForcibly();
    }
}
