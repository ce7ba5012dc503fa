package dev.idempotency.testkit;

import static dev.idempotency.testkit.StoreFixture.A;
import static dev.idempotency.testkit.StoreFixture.SHORT_LOCK_TIMEOUT;
import static dev.idempotency.testkit.StoreFixture.assertOutcome;
import static dev.idempotency.testkit.StoreFixture.await;
import static dev.idempotency.testkit.StoreFixture.describe;
import static dev.idempotency.testkit.StoreFixture.lockWaitBound;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.Outcome;
import dev.idempotency.testkit.StoreFixture.Counting;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * Transactional mode with several transactions open at once, each on a thread of its own: the
 * promises about an open holder of the key, {@code Contract 3.3 (concurrent holder commits)},
 * {@code Contract 3.3 (concurrent holder rolls back)} and {@code Contract 3.3 (lock timeout)}, one
 * example each, and the concurrency property {@code Contract 3 (guarantee)}: at most one committed
 * execution per key. The property's keys also start from a live lease where the store is a
 * {@link dev.idempotency.spi.LeasingStore}.
 *
 * <p>Implement it on a {@link StoreFixture} whose {@link StoreFixture#begin()} can be called from
 * several threads at once.
 *
 * @param <C> the store's transaction type
 */
public interface ConcurrencyContract<C> extends ContractPart<C> {

    /**
     * Contract 3.3 (docs/contract.md): an attempt that meets an open holder waits; the holder
     * commits; the attempt replays.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void concurrentHolderThatCommitsIsReplayed() throws Exception {
        StoreFixture<C> f = fixture();
        IdempotencyKey key = IdempotencyKey.of("holder", "commits");
        Counting waiterWork = new Counting("waiter");
        Outcome<String> waited = withHolder(Promise.HOLDER_COMMITS, key, f.idem, waiterWork, true);
        assertOutcome(Promise.HOLDER_COMMITS, waited, Outcome.Status.REPLAYED, "holder");
        assertThat(waiterWork.runs()).as(Promise.HOLDER_COMMITS.broken("The waiter's work ran")).isZero();
    }

    /**
     * Contract 3.3 (docs/contract.md): an attempt that meets an open holder waits; the holder rolls
     * back; the attempt runs.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void concurrentHolderThatRollsBackLetsTheWaiterRun() throws Exception {
        StoreFixture<C> f = fixture();
        IdempotencyKey key = IdempotencyKey.of("holder", "rolls-back");
        Counting waiterWork = new Counting("waiter");
        Outcome<String> waited = withHolder(Promise.HOLDER_ROLLS_BACK, key, f.idem, waiterWork, false);
        assertOutcome(Promise.HOLDER_ROLLS_BACK, waited, Outcome.Status.EXECUTED, "waiter");
        assertOutcome(Promise.HOLDER_ROLLS_BACK, f.inTx(f.idem, key, A, new Counting("retry"), true), Outcome.Status.REPLAYED, "waiter");
    }

    /**
     * Contract 3.3 (docs/contract.md): an attempt that waits longer than the lock timeout gets
     * InProgress, within the timeout rounded up to whole seconds plus {@link StoreFixture#LOCK_WAIT_TOLERANCE}:
     * with the 200 ms timeout of this test, within 3 seconds.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void concurrentHolderPastTheLockTimeoutGivesInProgress() throws Exception {
        StoreFixture<C> f = fixture();
        IdempotencyKey key = IdempotencyKey.of("holder", "keeps-it");
        Counting waiterWork = new Counting("waiter");
        Duration bound = lockWaitBound(SHORT_LOCK_TIMEOUT);
        C holder = f.open();
        boolean open = true;
        try {
            assertOutcome(Promise.LOCK_TIMEOUT, f.idem.execute(IdempotentCall.of(key, A), holder, new Counting("holder")), Outcome.Status.EXECUTED, "holder");
            long started = System.nanoTime();
            Future<Outcome<String>> waiter = f.threads.submit(() -> f.inTx(f.impatient, key, A, waiterWork, true));
            Outcome<String> waited;
            try {
                waited = waiter.get(bound.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                long after = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                open = false;
                f.rollback(holder);
                Outcome<String> late = await(Promise.LOCK_TIMEOUT, waiter);
                throw new AssertionError(Promise.LOCK_TIMEOUT.broken("With a lock timeout of " + Operations.duration(SHORT_LOCK_TIMEOUT) + " the"
                        + " wait must end within " + Operations.duration(bound) + "; the attempt was still waiting after " + Operations.duration(java.time.Duration.ofMillis(after)) + ", and got "
                        + describe(late) + " once the holder rolled back. Does the store pass the request's lockTimeout() to its"
                        + " database (for JDBC: Statement.setQueryTimeout, or a session lock timeout that it sets back)?"), e);
            } catch (ExecutionException e) {
                throw new AssertionError(Promise.LOCK_TIMEOUT.broken("The waiting attempt failed: " + e.getCause()), e.getCause());
            }
            assertOutcome(Promise.LOCK_TIMEOUT, waited, Outcome.Status.IN_PROGRESS, null);
            assertThat(waiterWork.runs()).as(Promise.LOCK_TIMEOUT.broken("The waiter's work ran")).isZero();
            open = false;
            f.commit(holder);
        } finally {
            if (open) {
                f.rollback(holder);
            }
        }
        assertOutcome(Promise.LOCK_TIMEOUT, f.inTx(f.idem, key, A, waiterWork, true), Outcome.Status.REPLAYED, "holder");
    }

    /**
     * Rounds of 2 to 6 attempts on two keys, each in a thread and a transaction of its own, started
     * together; some commit, some roll back, some throw. Each key starts a round in one of the states
     * of its start: no record, a committed result, a result that expires exactly now, a
     * recorded final failure, or (for a {@link dev.idempotency.spi.LeasingStore}) a live lease.
     * Afterwards each key has at most one committed execution, every attempt saw what the model allows
     * for its key's start (that execution's result, the recorded one, InProgress or Mismatch), and the
     * store replays it. A failing round is run again with fewer threads while it still fails, and the
     * fewest reported.
     */
    @Test
    default void concurrentAttemptsExecuteAtMostOncePerKey() {
        new ConcurrentRounds<>(fixture()).run();
    }

    private Outcome<String> withHolder(Promise promise, IdempotencyKey key, Idempotency<C> engine, Counting waiterWork, boolean holderCommits)
            throws Exception {
        StoreFixture<C> f = fixture();
        C holder = f.open();
        boolean open = true;
        try {
            assertOutcome(promise, f.idem.execute(IdempotentCall.of(key, A), holder, new Counting("holder")), Outcome.Status.EXECUTED, "holder");
            Future<Outcome<String>> waiter = f.threads.submit(() -> f.inTx(engine, key, A, waiterWork, true));
            // Let the waiter reach the store before the holder ends. The expected outcome is the same
            // if it does not: it then finds the holder's committed record, or none.
            Thread.sleep(100);
            open = false;
            if (holderCommits) {
                f.commit(holder);
            } else {
                f.rollback(holder);
            }
            return await(promise, waiter);
        } finally {
            if (open) {
                f.rollback(holder);
            }
        }
    }
}
