package dev.idempotency.testkit;

import static dev.idempotency.testkit.Chunks.assertChunk;
import static dev.idempotency.testkit.Chunks.expected;
import static dev.idempotency.testkit.Chunks.items;
import static dev.idempotency.testkit.StoreFixture.A;
import static dev.idempotency.testkit.StoreFixture.B;
import static dev.idempotency.testkit.StoreFixture.RETENTION;
import static dev.idempotency.testkit.StoreFixture.SHORT_LOCK_TIMEOUT;
import static dev.idempotency.testkit.StoreFixture.assertOutcome;
import static dev.idempotency.testkit.StoreFixture.await;
import static dev.idempotency.testkit.StoreFixture.catchThrowable;
import static dev.idempotency.testkit.StoreFixture.describe;
import static dev.idempotency.testkit.StoreFixture.held;
import static dev.idempotency.testkit.StoreFixture.lockWaitBound;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.AbandonedClaimException;
import dev.idempotency.DuplicateKeyInChunkException;
import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.Outcome;
import dev.idempotency.testkit.Chunks.Item;
import dev.idempotency.testkit.Chunks.ItemRuns;
import dev.idempotency.testkit.StoreFixture.Counting;
import dev.idempotency.testkit.StoreFixture.FinalFailure;
import dev.idempotency.spi.TransactionalStore;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * Batch jobs (section 9 of docs/contract.md): {@code claimAll} and {@code completeAll} through
 * {@link dev.idempotency.Idempotency#executeChunk}, for any store (the SPI's defaults claim and
 * complete one key after the other; a store that overrides them is checked here). One example per
 * promise, {@code Contract 9 (chunk runs once)}, {@code Contract 9 (each item its own outcome)},
 * {@code Contract 9 (chunk rolled back)}, {@code Contract 9 (chunk waits for a holder)},
 * {@code Contract 9 (chunk past the lock timeout)}, {@code Contract 9 (overlapping chunks)},
 * {@code Contract 9 (duplicate key in a chunk)}
 * and {@code Contract 9 (final failure in a chunk)}, and a chunk property: random sequences of
 * chunks and clock moves, compared with a model.
 *
 * <p>Implement it on a {@link StoreFixture}; the holder examples open a second transaction on a
 * thread of their own, and the overlapping chunks two more.
 *
 * @param <C> the store's transaction type
 */
public interface ChunkContract<C> extends ContractPart<C> {

    /**
     * The lock timeout of the overlapping chunks: long enough for a wait on an open holder and on
     * the other chunk, short enough that a store that deadlocks them is found soon.
     */
    Duration OVERLAP_LOCK_TIMEOUT = Duration.ofSeconds(2);

    /**
     * Contract 9 (docs/contract.md): a chunk of new keys, given out of key order, runs each item
     * once and answers in input order; a retry of the committed chunk replays every item's own
     * result, running nothing.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void chunkOfNewKeysRunsEachItemOnceAndItsRetryReplaysEveryItemInInputOrder() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.CHUNK_ONCE;
        String[] ids = {"k3", "k1", "k4", "k2"};
        ItemRuns first = new ItemRuns();
        assertChunk(p, "The first run of a chunk of new keys", f.chunkInTx(p, items("chunk-once", A, "first-", ids), first, true),
                expected("EXECUTED", "first-", ids));
        for (String id : ids) {
            assertThat(first.of(id)).as(p.broken("The work of item " + id + " ran " + first.of(id) + " times")).isEqualTo(1);
        }
        ItemRuns retry = new ItemRuns();
        assertChunk(p, "The retry of the committed chunk", f.chunkInTx(p, items("chunk-once", A, "retry-", ids), retry, true),
                expected("REPLAYED", "first-", ids));
        assertThat(retry.total()).as(p.broken("The retry's work ran: " + retry)).isZero();
        for (String id : ids) {
            assertReplayed(p, IdempotencyKey.of("chunk-once", id), "first-" + id);
        }
    }

    /**
     * Contract 9 and 3.3 (docs/contract.md): one chunk holding a new key, a recorded one, one whose
     * record expired (exactly now) and one recorded with another fingerprint gives each its own
     * outcome.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void chunkMixingRecordedNewExpiredAndMismatchingKeysGivesEachItsOwnOutcome() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.CHUNK_OUTCOMES;
        IdempotencyKey recorded = IdempotencyKey.of("chunk-mixed", "a-recorded");
        IdempotencyKey mismatching = IdempotencyKey.of("chunk-mixed", "b-mismatching");
        IdempotencyKey expired = IdempotencyKey.of("chunk-mixed", "c-expired");
        IdempotencyKey fresh = IdempotencyKey.of("chunk-mixed", "d-new");
        f.inTx(f.idem, expired, A, new Counting("old"), true);
        f.clock.advance(RETENTION.dividedBy(2));
        f.inTx(f.idem, recorded, A, new Counting("recorded"), true);
        f.inTx(f.idem, mismatching, A, new Counting("other request"), true);
        f.clock.advance(RETENTION.dividedBy(2));
        List<Item> chunk = List.of(new Item(fresh, A, "new"), new Item(recorded, A, "x"), new Item(expired, A, "renewed"),
                new Item(mismatching, B, "x"));
        ItemRuns work = new ItemRuns();
        assertChunk(p, "A chunk of a new, a recorded, an expired and a mismatching key", f.chunkInTx(p, chunk, work, true),
                "EXECUTED(new)", "REPLAYED(recorded)", "EXECUTED(renewed)", "MISMATCH");
        assertThat(work.runs).as(p.broken("The work ran for other keys than the new and the expired one, or not once each"))
                .isEqualTo(Map.of("d-new", 1, "c-expired", 1));
        assertReplayed(p, fresh, "new");
        assertReplayed(p, expired, "renewed");
        assertReplayed(p, recorded, "recorded");
        assertReplayed(p, mismatching, "other request");
    }

    /**
     * Contract 9 and 3 (docs/contract.md): a chunk whose transaction rolled back leaves nothing;
     * its retry runs every item.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void chunkRolledBackLeavesNothing() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.CHUNK_ROLLBACK;
        String[] ids = {"k2", "k1", "k3"};
        assertChunk(p, "The chunk that is then rolled back", f.chunkInTx(p, items("chunk-rollback", A, "first-", ids), new ItemRuns(), false),
                expected("EXECUTED", "first-", ids));
        ItemRuns retry = new ItemRuns();
        assertChunk(p, "The retry of the rolled-back chunk", f.chunkInTx(p, items("chunk-rollback", A, "retry-", ids), retry, true),
                expected("EXECUTED", "retry-", ids));
        assertThat(retry.total()).as(p.broken("The retry's work did not run once per item: " + retry)).isEqualTo(ids.length);
        assertChunk(p, "The chunk once more", f.chunkInTx(p, items("chunk-rollback", A, "x-", ids), new ItemRuns(), false),
                expected("REPLAYED", "retry-", ids));
    }

    /**
     * Contract 9 and 3.3 (docs/contract.md): a chunk whose keys an open transaction holds (claimed
     * by a chunk of its own) waits for it; once the holder commits, the chunk replays the holder's
     * results and runs only its key that nobody held.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void chunkWhoseKeysAnOpenTransactionHoldsWaitsAndReplaysOnceItCommits() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.CHUNK_HOLDER;
        List<Item> held = items("chunk-holder", A, "holder-", "k2", "k1");
        C holder = f.open();
        boolean open = true;
        try {
            List<Outcome<String>> claimed;
            try {
                claimed = f.idem.executeChunk(holder, held, Item::call, new ItemRuns());
            } catch (RuntimeException e) {
                throw new AssertionError(p.broken("The holder's executeChunk threw " + e), e);
            }
            assertChunk(p, "The holder's chunk", claimed, "EXECUTED(holder-k2)", "EXECUTED(holder-k1)");
            List<Item> waiting = items("chunk-holder", A, "waiter-", "k0", "k2", "k1");
            ItemRuns waiterWork = new ItemRuns();
            Future<List<Outcome<String>>> waiter = f.threads.submit(() -> f.chunkInTx(p, waiting, waiterWork, true));
            // Let the waiter reach the store before the holder ends; the expected outcomes are the same if it does not.
            Thread.sleep(100);
            open = false;
            f.commit(holder);
            assertChunk(p, "The chunk that met the holder", await(p, waiter), "EXECUTED(waiter-k0)", "REPLAYED(holder-k2)",
                    "REPLAYED(holder-k1)");
            assertThat(waiterWork.of("k1") + waiterWork.of("k2")).as(p.broken("The waiter's work ran for a held key: " + waiterWork)).isZero();
        } finally {
            if (open) {
                f.rollback(holder);
            }
        }
    }

    /**
     * Contract 9 and 3.3 (docs/contract.md): an open transaction holds one key of a chunk past the
     * chunk's lock timeout. That item answers InProgress and its work does not run; the chunk does
     * not fail (on a database where a failed statement aborts the transaction, the store must claim
     * that key so that the transaction survives); the other items run, or answer InProgress where
     * the store locks more than the key; the chunk's transaction commits, and once the holder has
     * committed a rerun replays every item.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void chunkWithAKeyHeldPastTheLockTimeoutAnswersInProgressForItAndCommitsTheRest() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.CHUNK_LOCK_TIMEOUT;
        C holder = f.open();
        boolean open = true;
        try {
            List<Outcome<String>> held;
            try {
                held = f.idem.executeChunk(holder, items("chunk-held", A, "holder-", "k1"), Item::call, new ItemRuns());
            } catch (RuntimeException e) {
                throw new AssertionError(p.broken("The holder's executeChunk threw " + e), e);
            }
            assertChunk(p, "The holder's chunk", held, "EXECUTED(holder-k1)");
            List<Item> waiting = items("chunk-held", A, "waiter-", "k0", "k1", "k2");
            ItemRuns waiterWork = new ItemRuns();
            Duration bound = lockWaitBound(SHORT_LOCK_TIMEOUT).multipliedBy(waiting.size());
            Future<List<Outcome<String>>> waiter = f.threads.submit(() -> f.chunkInTx(p, f.impatient, waiting, waiterWork, true));
            List<Outcome<String>> waited;
            try {
                waited = waiter.get(bound.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                throw new AssertionError(p.broken("With a lock timeout of " + Operations.duration(SHORT_LOCK_TIMEOUT) + " the chunk of "
                        + waiting.size() + " keys was still waiting after " + Operations.duration(bound) + ""), e);
            } catch (ExecutionException e) {
                throw e.getCause() instanceof AssertionError a ? a : new AssertionError(p.broken("The chunk failed: " + e.getCause()), e.getCause());
            }
            assertThat(waited).as(p.broken("one outcome per item")).hasSize(3);
            assertThat(describe(waited.get(1))).as(p.broken("The held key's outcome")).isEqualTo("IN_PROGRESS");
            assertThat(waiterWork.of("k1")).as(p.broken("The work ran for the held key: " + waiterWork)).isZero();
            for (int i : new int[] {0, 2}) {
                assertThat(describe(waited.get(i))).as(p.broken("A free key's outcome"))
                        .isIn("EXECUTED(waiter-" + waiting.get(i).key().id() + ")", "IN_PROGRESS");
            }
            open = false;
            f.commit(holder);
            List<Outcome<String>> rerun = f.chunkInTx(p, waiting, new ItemRuns(), true);
            assertThat(describe(rerun.get(1))).as(p.broken("The held key, once its holder committed")).isEqualTo("REPLAYED(holder-k1)");
            for (int i : new int[] {0, 2}) {
                String id = waiting.get(i).key().id();
                String expected = describe(waited.get(i)).startsWith("EXECUTED") ? "REPLAYED(waiter-" + id + ")" : "EXECUTED(waiter-" + id + ")";
                assertThat(describe(rerun.get(i))).as(p.broken("A free key in the rerun")).isEqualTo(expected);
            }
        } finally {
            if (open) {
                f.rollback(holder);
            }
        }
    }

    /**
     * Contract 9 (docs/contract.md): two chunks whose keys overlap are claimed at once, from two
     * threads, in both orders of start. An open transaction holds a key in the middle of both
     * (in the engine's order), so that each chunk has claimed a key and waits for that one when
     * the holder rolls back; the two must then take their remaining keys in the same order. A store
     * that locks the keys of one chunk in another order than those of the other deadlocks there:
     * it waits out the lock timeout and answers InProgress for a key that only the other chunk held,
     * or fails. Expected: every item of both chunks runs once in one of them, and the other replays
     * it.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void overlappingChunksClaimedAtOnceWaitForEachOtherInsteadOfDeadlocking() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.CHUNK_LOCK_ORDER;
        // Long enough for a wait on the holder and on the other chunk, short enough that a deadlock ends soon.
        if (!(f.store instanceof TransactionalStore<C> transactional)) {
            throw new AssertionError(p.broken("The store claims no chunks: it is not a TransactionalStore"));
        }
        Idempotency<C> engine = Idempotency.builder(transactional).clock(f.clock)
                .keyPolicy(f.policy.toBuilder().lockTimeout(OVERLAP_LOCK_TIMEOUT).build()).build();
        for (boolean longerFirst : List.of(false, true)) {
            String scope = "chunk-overlap-" + (longerFirst ? "longer-first" : "shorter-first");
            C holder = f.open();
            boolean open = true;
            try {
                try {
                    f.idem.executeChunk(holder, items(scope, A, "holder-", "b-middle"), Item::call, new ItemRuns());
                } catch (RuntimeException e) {
                    throw new AssertionError(p.broken("The holder's executeChunk threw " + e), e);
                }
                // Out of key order on purpose: the engine sorts them.
                List<Item> shorter = items(scope, A, "shorter-", "c-last", "a-first", "b-middle");
                List<Item> longer = items(scope, A, "longer-", "d-extra", "b-middle", "a-first", "c-last");
                ItemRuns work = new ItemRuns();
                List<Future<List<Outcome<String>>>> chunks = new java.util.ArrayList<>();
                for (List<Item> chunk : longerFirst ? List.of(longer, shorter) : List.of(shorter, longer)) {
                    chunks.add(f.threads.submit(() -> f.chunkInTx(p, engine, chunk, work, true)));
                }
                // Let both chunks reach the held key before the holder ends; the expected outcomes are the same if they do not.
                Thread.sleep(200);
                open = false;
                f.rollback(holder);
                List<Outcome<String>> first = await(p, chunks.get(0));
                List<Outcome<String>> second = await(p, chunks.get(1));
                List<String> seen = new java.util.ArrayList<>();
                first.forEach(o -> seen.add(describe(o)));
                second.forEach(o -> seen.add(describe(o)));
                String what = "Two chunks " + shorter + " and " + longer + " (the " + (longerFirst ? "longer" : "shorter") + " one started"
                        + " first) met a holder of " + scope + "/b-middle, which then rolled back; they answered " + first + " and " + second;
                assertThat(seen).as(p.broken(what + ": no item may be in progress once both have ended")).noneMatch(d -> d.equals("IN_PROGRESS"));
                for (String id : List.of("a-first", "b-middle", "c-last", "d-extra")) {
                    assertThat(work.of(id)).as(p.broken(what + ": the work of " + id + " must run once, in one chunk; " + work)).isEqualTo(1);
                }
                for (Item item : longer) {
                    Outcome<String> outcome = f.inTx(f.idem, item.key(), A, new Counting("x"), false);
                    assertThat(describe(outcome)).as(p.broken(what + ": a retry of " + item + " afterwards")).startsWith("REPLAYED(");
                }
            } finally {
                if (open) {
                    f.rollback(holder);
                }
            }
        }
    }

    /**
     * Contract 9 (docs/contract.md): a chunk with a key twice is refused with
     * DuplicateKeyInChunkException, even if the caller commits: nothing runs and nothing is
     * written.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void chunkWithADuplicateKeyIsRefusedWithNothingWritten() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.CHUNK_DUPLICATE;
        IdempotencyKey one = IdempotencyKey.of("chunk-duplicate", "k1");
        IdempotencyKey two = IdempotencyKey.of("chunk-duplicate", "k2");
        List<Item> chunk = List.of(new Item(one, A, "one"), new Item(two, A, "two"), new Item(one, A, "again"));
        ItemRuns work = new ItemRuns();
        C tx = f.open();
        Throwable thrown = catchThrowable(() -> f.idem.executeChunk(tx, chunk, Item::call, work));
        f.commit(tx);
        assertThat(thrown).as(p.broken("executeChunk " + (thrown == null ? "ran" : "threw " + thrown)))
                .isInstanceOf(DuplicateKeyInChunkException.class);
        assertThat(work.total()).as(p.broken("The work ran: " + work)).isZero();
        ItemRuns retry = new ItemRuns();
        assertChunk(p, "The chunk without the duplicate", f.chunkInTx(p, chunk.subList(0, 2), retry, true), "EXECUTED(one)", "EXECUTED(two)");
    }

    /**
     * Contract 9 and 3.4 (docs/contract.md): a final failure of the middle item is recorded for it
     * alone, without its partial write (a store write: it executes another key in the chunk's
     * transaction); the items around it are recorded, and a retry replays each item's own outcome.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void finalFailureOfOneItemInAChunkIsRecordedForThatItemAlone() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.CHUNK_FINAL_FAILURE;
        IdempotencyKey partial = IdempotencyKey.of("chunk-final-failure", "partial");
        List<Item> chunk = items("chunk-final-failure", A, "v-", "k1", "k2", "k3");
        ItemRuns counted = new ItemRuns();
        C tx = f.open();
        List<Outcome<String>> first;
        try {
            first = f.idem.executeChunk(tx, chunk, Item::call, item -> {
                String value = counted.apply(item);
                if (item.key().id().equals("k2")) {
                    f.idem.execute(IdempotentCall.of(partial, A), tx, () -> "partial write");
                    throw new FinalFailure("card declined");
                }
                return value;
            });
        } catch (Throwable t) {
            f.rollbackQuietly(tx, t);
            throw new AssertionError(p.broken("executeChunk threw " + t), t);
        }
        f.commit(tx);
        assertChunk(p, "The chunk whose item k2 failed finally", first, "EXECUTED(v-k1)", "FAILED(card declined, new)", "EXECUTED(v-k3)");
        ItemRuns retry = new ItemRuns();
        assertChunk(p, "The retry of the committed chunk", f.chunkInTx(p, items("chunk-final-failure", A, "r-", "k1", "k2", "k3"), retry, true),
                "REPLAYED(v-k1)", "FAILED(card declined, replayed)", "REPLAYED(v-k3)");
        assertThat(retry.total()).as(p.broken("The retry's work ran: " + retry)).isZero();
        assertOutcome(p, f.inTx(f.idem, partial, A, new Counting("partial again"), true), Outcome.Status.EXECUTED, "partial again");
    }

    /**
     * A retry of {@code key} alone, rolled back, replays {@code value}; a record found still in progress breaks {@code promise}.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    private void assertReplayed(Promise promise, IdempotencyKey key, String value) throws Exception {
        StoreFixture<C> f = fixture();
        Outcome<String> outcome;
        try {
            outcome = f.inTx(f.idem, key, A, new Counting("x"), false);
        } catch (AbandonedClaimException stillInProgress) {
            throw new AssertionError(promise.broken("A retry of " + key + " alone, after the chunk committed, found its record still in"
                    + " progress: " + stillInProgress.getMessage()), stillInProgress);
        }
        assertOutcome(promise, outcome, Outcome.Status.REPLAYED, value);
    }

    /**
     * Contract 9 (docs/contract.md): random sequences of chunks (of keys that differ by scope and
     * by case, given in any order, each with one of two fingerprints, then committed or rolled
     * back) and clock moves (1 ms, half the retention, the retention less 1 ms, the retention),
     * every outcome compared with a model; each sequence ends with a rolled-back chunk of every key
     * that reads the final state. Runs a tenth of {@link Effort#sequences()}. Reports the shortest
     * failing sequence found, one step per line.
     */
    @Test
    default void randomChunksKeepTheContract() {
        StoreFixture<C> f = fixture();
        ChunkSequences<C> chunks = new ChunkSequences<>(f);
        f.sequenceProperty("chunk sequences run", Math.max(1, f.effort().sequences() / 10), ChunkSequences.sequences(),
                steps -> f.runShrinking(steps, chunks::firstBroken, step -> List.of()));
    }
}
