package dev.idempotency;

import dev.idempotency.spi.PendingOperation;
import dev.idempotency.spi.RecoveringStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finishes named operations whose client went away: a loop that finds the operations in progress
 * whose lease ended (a crashed node, a client that gave up), takes each over through the ordinary
 * lease claim, and resumes it at its recovery point with the phases registered under its name.
 *
 * <p>An operation is resumable when it was run with phases {@linkplain Phases#named named}: the
 * claim's transaction then records the name beside the recovery point (the prepare's value). The
 * worker resumes it as a retry of its client would, fenced the same way: among many workers and
 * clients exactly one attempt holds the key at a time, a client that retries meanwhile gets
 * {@code InProgress} (then the worker's result, once recorded), and a worker that finds a client's
 * live lease leaves it alone. Each pass:
 * <ul>
 *   <li>reads the store's list of named operations in progress, page by page (its cost is that of
 *       the operations in progress, whatever the number of records);</li>
 *   <li>skips those whose lease is live, and those whose last attempt by this worker failed less
 *       than the backoff ago: the {@link RetryPolicy#backoffBound bound} of the worker's
 *       {@link Builder#retryPolicy retry policy} for that attempt (1 s by default, doubled per
 *       attempt), at most {@code interval}, without jitter;</li>
 *   <li>resumes the others; an attempt that fails (not finally) ends its lease and is tried again in
 *       a later pass, until the operation has had the policy's {@code maxAttempts} attempts in all
 *       (its client's included; 5 by default): then the worker records
 *       {@link RecoveryGaveUpException} as its final failure, with the operation's own final-failure
 *       writes ({@link Phases.Called#onFinalFailure}), so that a client that comes back gets it
 *       replayed;</li>
 *   <li>reports, and never runs, an operation whose name no phases are registered under (a deploy
 *       that removed it), that has no recovery point, or whose recovery point the registered phases
 *       cannot decode (its codec changed);</li>
 *   <li>removes the entries of operations that have their outcome, or whose record is gone.</li>
 * </ul>
 * Every action is told to the engine's listener ({@link IdempotencyListener#onRecovery}).
 *
 * <pre>{@code
 * RecoveryWorker<Connection> worker = RecoveryWorker.builder(leased)   // over the JDBC store, a RecoveringStore
 *         .register(chargePhases)            // Phases ... .named("charge")
 *         .interval(Duration.ofSeconds(30))
 *         .build();
 * worker.start();                            // or worker.runOnce() from a scheduler of your own
 * }</pre>
 *
 * <p>Thread-safe; {@link #runOnce()} may be called from several threads and nodes at once (their
 * attempts are fenced). The backoff is kept per worker, in memory.
 *
 * @param <C> the transaction type
 */
public final class RecoveryWorker<C> implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RecoveryWorker.class);

    private final LeasedIdempotency<C> leased;
    private final RecoveringStore<C> store;
    private final Map<String, Phases<C, ?, ?>> operations;
    private final RetryPolicy retry;
    private final int pageSize;
    private final Duration interval;
    private final Map<IdempotencyKey, Long> notBefore = new ConcurrentHashMap<>();
    private final Set<IdempotencyKey> reported = ConcurrentHashMap.newKeySet();
    private final Object lifecycle = new Object();
    private Thread loop;

    private RecoveryWorker(Builder<C> b) {
        this.leased = b.leased;
        this.store = b.leased.store();
        this.operations = Collections.unmodifiableMap(new LinkedHashMap<>(b.operations));
        this.retry = b.retry;
        this.pageSize = b.pageSize;
        this.interval = b.interval;
    }

    /**
     * A worker for the named operations of {@code leased}, listed in its store: the engine is taken
     * typed as one over a store that lists them ({@link RecoveringLeasedIdempotency}), so that a
     * worker over a store that lists no operations does not compile.
     *
     * @param leased the lease-mode engine that runs the named operations
     * @param <C> the transaction type
     * @return a builder
     */
    public static <C> Builder<C> builder(RecoveringLeasedIdempotency<C> leased) {
        return new Builder<>(Objects.requireNonNull(leased, "leased"));
    }

    /**
     * What one pass did.
     *
     * @param seen the entries read
     * @param resumed operations resumed to their outcome
     * @param retrying resumed attempts that failed, to be tried again
     * @param gaveUp operations given up after their last attempt
     * @param reported operations that cannot be run (not registered, no recovery point, or one that cannot be decoded)
     * @param removed entries of operations already settled, removed
     */
    public record Pass(int seen, int resumed, int retrying, int gaveUp, int reported, int removed) {
    }

    /**
     * Runs one pass over the named operations in progress, on the calling thread.
     *
     * @return what it did
     * @throws IdempotencyStoreException if the store cannot list the operations
     */
    public Pass runOnce() {
        OwnTransactions<C> transactions = leased.ownTransactions();
        int[] counts = new int[6];
        IdempotencyKey after = null;
        while (!Thread.currentThread().isInterrupted()) {
            IdempotencyKey from = after;
            List<PendingOperation> page = transactions.runner().inTransaction(tx -> store.pending(tx, from, pageSize));
            for (PendingOperation entry : page) {
                counts[0]++;
                act(store, transactions, entry, counts);
            }
            if (page.size() < pageSize) {
                break;
            }
            after = page.get(page.size() - 1).key();
        }
        return new Pass(counts[0], counts[1], counts[2], counts[3], counts[4], counts[5]);
    }

    private void act(RecoveringStore<C> store, OwnTransactions<C> transactions, PendingOperation entry, int[] counts) {
        IdempotencyKey key = entry.key();
        if (entry.settled()) {
            transactions.retried(key, tx -> {
                store.delist(tx, key);
                return null;
            });
            notBefore.remove(key);
            reported.remove(key);
            counts[5]++;
            return;
        }
        if (!entry.abandoned()) {
            return; // a live lease: its holder is at work
        }
        Phases<C, ?, ?> phases = operations.get(entry.operation());
        if (phases == null) {
            report(key, entry.operation(), "no phases are registered under its name with this worker", counts);
            return;
        }
        Long due = notBefore.get(key);
        if (due != null && System.nanoTime() - due < 0) {
            return;
        }
        Kernel<C> kernel = leased.kernel();
        LeaseProtocol<C> protocol = leased.leaseProtocol();
        boolean givingUp = entry.attempts() >= retry.maxAttempts();
        try {
            Outcome<?> outcome = givingUp
                    ? protocol.giveUp(key, entry.fingerprint(), phases, new RecoveryGaveUpException(key, entry.operation(), entry.attempts()))
                    : protocol.resume(key, entry.fingerprint(), phases);
            if (outcome == null) {
                report(key, entry.operation(), "it has no recovery point to resume from", counts);
            } else if (outcome instanceof Outcome.Executed<?> || outcome instanceof Outcome.Failed<?> failed && !failed.replayed()) {
                notBefore.remove(key);
                if (givingUp) {
                    log.warn("Key {}: operation '{}' given up after {} attempts; it needs attention", key, entry.operation(),
                            entry.attempts());
                    counts[3]++;
                } else {
                    log.info("Key {}: operation '{}' resumed by the recovery worker: {}", key, entry.operation(), outcome.status());
                    counts[1]++;
                }
                kernel.heard().recovery(key, entry.operation(), givingUp ? RecoveryAction.GAVE_UP : RecoveryAction.RESUMED, null);
            }
        } catch (LeaseLostException lost) {
            log.debug("Key {}: another attempt took operation '{}' over", key, entry.operation());
        } catch (ResultCodecException undecodable) {
            // The take-over rolled back with it: running again would fail again, whatever the attempts.
            report(key, entry.operation(), "its recovery point cannot be decoded by the registered phases ("
                    + undecodable.getMessage() + ")", counts);
        } catch (Exception failure) {
            int attempt = entry.attempts() + 1;
            long wait = Math.min(retry.backoffBound(attempt).toNanos(), interval.toNanos()); // before attempt + 1
            notBefore.put(key, System.nanoTime() + wait);
            log.info("Key {}: the recovery worker's attempt {} of operation '{}' failed; it is tried again in {} ms", key, attempt,
                    entry.operation(), wait / 1_000_000, failure);
            counts[2]++;
            kernel.heard().recovery(key, entry.operation(), RecoveryAction.RETRYING, failure);
        }
    }

    private void report(IdempotencyKey key, String operation, String why, int[] counts) {
        counts[4]++;
        if (reported.add(key)) {
            log.warn("Key {}: operation '{}' is abandoned but the recovery worker cannot run it: {}", key, operation, why);
            leased.kernel().heard().recovery(key, operation, RecoveryAction.REPORTED, null);
        }
    }

    /**
     * Starts a daemon thread that runs a pass, then waits the interval, until {@link #close()}. A
     * pass that fails is logged, and the next one runs after the interval.
     *
     * @throws IllegalStateException if it was started already
     */
    public void start() {
        synchronized (lifecycle) {
            if (loop != null) {
                throw new IllegalStateException("this recovery worker was started already");
            }
            loop = new Thread(this::loop, "idempotency-recovery");
            loop.setDaemon(true);
            loop.start();
        }
    }

    private void loop() {
        while (!Thread.currentThread().isInterrupted()) {
            try {
                Pass pass = runOnce();
                if (pass.seen() > 0) {
                    log.debug("Recovery pass: {}", pass);
                }
            } catch (RuntimeException e) {
                log.warn("A recovery pass failed; the next one runs in {}", interval, e);
            }
            if (!OwnTransactions.pause(interval)) {
                return;
            }
        }
    }

    /** Stops the thread of {@link #start()}, if any, and waits for its pass to end. */
    @Override
    public void close() {
        Thread running;
        synchronized (lifecycle) {
            running = loop;
        }
        if (running != null) {
            running.interrupt();
            try {
                running.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** @return the names of the registered operations */
    public List<String> operations() {
        return new ArrayList<>(operations.keySet());
    }

    @Override
    public String toString() {
        return "RecoveryWorker[operations=" + operations.keySet() + ", maxAttempts=" + retry.maxAttempts() + ", interval=" + interval + "]";
    }

    /**
     * Builds a {@link RecoveryWorker}. Not thread-safe; what it builds is.
     *
     * @param <C> the transaction type
     */
    public static final class Builder<C> {
        /**
         * The worker's retry policy by default: 5 attempts in all, a backoff of 1 s doubled per
         * attempt, bounded by the interval only ({@link RetryPolicy#LONGEST_BACKOFF} as its maximum).
         */
        public static final RetryPolicy DEFAULT_RETRY = RetryPolicy.builder().maxAttempts(5)
                .backoff(Duration.ofSeconds(1), RetryPolicy.LONGEST_BACKOFF).build();

        private final RecoveringLeasedIdempotency<C> leased;
        private final Map<String, Phases<C, ?, ?>> operations = new LinkedHashMap<>();
        private RetryPolicy retry = DEFAULT_RETRY;
        private int pageSize = 100;
        private Duration interval = Duration.ofSeconds(30);

        private Builder(RecoveringLeasedIdempotency<C> leased) {
            this.leased = leased;
        }

        /**
         * Registers named phases: the worker resumes the operations recorded under their name.
         *
         * @param phases phases given a name with {@link Phases#named(String)}
         * @return this builder
         * @throws IllegalArgumentException if other phases are registered under the name
         */
        public Builder<C> register(NamedPhases<C, ?, ?> phases) {
            String name = Objects.requireNonNull(phases, "phases").operation();
            if (operations.putIfAbsent(name, phases.phases) != null) {
                throw new IllegalArgumentException("operation '" + name + "' is registered already");
            }
            return this;
        }

        /**
         * @param retry the attempts an operation may have in all, its client's included, before the
         *     worker gives it up ({@link RetryPolicy#maxAttempts()}), and the pause after this
         *     worker's failed attempt before it tries again ({@link RetryPolicy#backoffBound}, at most
         *     the {@link #interval}); {@link #DEFAULT_RETRY} by default
         * @return this builder
         */
        public Builder<C> retryPolicy(RetryPolicy retry) {
            this.retry = Objects.requireNonNull(retry, "retry");
            return this;
        }

        /**
         * The retry policy's attempts, its backoff kept.
         *
         * @param maxAttempts the attempts an operation may have in all, its client's included, before
         *     the worker gives it up; 1 to 100 (default 5)
         * @return this builder
         * @throws IllegalArgumentException naming {@code maxAttempts} if out of range
         */
        public Builder<C> maxAttempts(int maxAttempts) {
            this.retry = RetryPolicy.builder().maxAttempts(maxAttempts).backoff(retry.initialBackoff(), retry.maxBackoff()).build();
            return this;
        }

        /**
         * @param pageSize the entries read per query; 1 to 10,000 (default 100)
         * @return this builder
         */
        public Builder<C> pageSize(int pageSize) {
            if (pageSize < 1 || pageSize > 10_000) {
                throw new IllegalArgumentException("pageSize must be 1 to 10000, was " + pageSize);
            }
            this.pageSize = pageSize;
            return this;
        }

        /**
         * @param interval the pause between the passes of {@link #start()}, and the longest backoff
         *     whatever the retry policy's; positive (default 30 s)
         * @return this builder
         */
        public Builder<C> interval(Duration interval) {
            this.interval = positive(interval, "interval");
            return this;
        }

        /**
         * The retry policy's first backoff, its attempts and longest backoff kept.
         *
         * @param backoff the pause after this worker's first failed attempt of an operation, doubled
         *     for each later one (at most the interval); positive, at most the policy's
         *     {@link RetryPolicy#maxBackoff()} (default 1 s)
         * @return this builder
         * @throws IllegalArgumentException naming {@code backoff} if out of range
         */
        public Builder<C> backoff(Duration backoff) {
            positive(backoff, "backoff");
            this.retry = RetryPolicy.builder().maxAttempts(retry.maxAttempts()).backoff(backoff, retry.maxBackoff()).build();
            return this;
        }

        private static Duration positive(Duration d, String name) {
            Objects.requireNonNull(d, name);
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(name + " must be positive, was " + d);
            }
            return d;
        }

        /**
         * @return the worker, not started
         * @throws IllegalStateException if no operation is registered
         */
        public RecoveryWorker<C> build() {
            if (operations.isEmpty()) {
                throw new IllegalStateException("no operation is registered: register the named phases the worker is to resume");
            }
            return new RecoveryWorker<>(this);
        }
    }
}
