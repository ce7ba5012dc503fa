package dev.idempotency.testkit;

import static dev.idempotency.testkit.StoreFixture.A;
import static dev.idempotency.testkit.StoreFixture.B;
import static dev.idempotency.testkit.StoreFixture.RETENTION;
import static dev.idempotency.testkit.StoreFixture.assertOutcome;
import static dev.idempotency.testkit.StoreFixture.catchThrowable;
import static dev.idempotency.testkit.StoreFixture.describe;
import static dev.idempotency.testkit.StoreFixture.receipts;
import static dev.idempotency.testkit.StoreFixture.require;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.idempotency.AbandonedClaimException;
import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.NestedKeyException;
import dev.idempotency.Outcome;
import dev.idempotency.ResultCodec;
import dev.idempotency.TransactionRequiredException;
import dev.idempotency.spi.LeasingStore;
import dev.idempotency.testkit.StoreFixture.Counting;
import dev.idempotency.testkit.StoreFixture.FinalFailure;
import dev.idempotency.testkit.StoreFixture.PlainFailure;
import dev.idempotency.testkit.StoreFixture.UnusableTransaction;
import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.StoredRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Transactional mode (section 3 of docs/contract.md), for any store: one example per promise, each
 * named after it and run one transaction at a time. Its promises: {@code Contract 3.3 (replay)},
 * {@code Contract 3 (rollback)}, {@code Contract 3.3 (mismatch)}, {@code Contract 3.3 (mismatch in
 * progress)}, {@code Contract 3.3 (expiry)}, {@code Contract 3.4 (work exception)}, {@code Contract
 * 3.4 (final failure)}, {@code Contract 3.5 (result)}, {@code Contract 3.5 (largest result)},
 * {@code Contract 3.5 (completion times)}, {@code Contract 2 (scope)}, {@code Contract 2 (exact
 * keys)}, {@code Contract 2 (largest keys)}, {@code Contract 3.2 (transaction required)},
 * {@code Contract 8 (purge)}, and the kit's own {@code KIT HOOKS}. For a {@link dev.idempotency.spi.LeasingStore}, the in-progress
 * example also meets a committed lease claim.
 *
 * <p>Implement it on a {@link StoreFixture}, with the other parts the store supports.
 *
 * @param <C> the store's transaction type
 */
public interface ExampleContract<C> extends ContractPart<C> {

    /**
     * Contract 3.3 (docs/contract.md): after a commit, a retry with the same fingerprint gets the
     * recorded result back.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void committedThenRetriedIsReplayed() throws Exception {
        StoreFixture<C> f = fixture();
        IdempotencyKey key = IdempotencyKey.of("replay", "k1");
        Counting first = new Counting("first");
        Counting retry = new Counting("retry");
        Outcome<String> executed = f.inTx(f.idem, key, A, first, true);
        assertOutcome(Promise.REPLAY, executed, Outcome.Status.EXECUTED, "first");
        Outcome<String> replayed = f.inTx(f.idem, key, A, retry, true);
        assertOutcome(Promise.REPLAY, replayed, Outcome.Status.REPLAYED, "first");
        assertThat(retry.runs()).as(Promise.REPLAY.broken("The retry's work ran")).isZero();
        assertThat(f.inTx(f.idem, key, A, retry, false).valueOr(null)).as(Promise.REPLAY.broken("A second retry did not replay")).isEqualTo("first");
    }

    /**
     * Contract 3 (docs/contract.md): a rolled-back attempt leaves nothing; the retry runs the work.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void rolledBackThenRetriedRunsAgain() throws Exception {
        StoreFixture<C> f = fixture();
        IdempotencyKey key = IdempotencyKey.of("rollback", "k1");
        Outcome<String> first = f.inTx(f.idem, key, A, new Counting("first"), false);
        assertOutcome(Promise.ROLLBACK, first, Outcome.Status.EXECUTED, "first");
        Counting retry = new Counting("retry");
        Outcome<String> again = f.inTx(f.idem, key, A, retry, true);
        assertOutcome(Promise.ROLLBACK, again, Outcome.Status.EXECUTED, "retry");
        assertThat(retry.runs()).as(Promise.ROLLBACK.broken("The retry's work did not run")).isEqualTo(1);
    }

    /**
     * Contract 3.3 (docs/contract.md): the same key with another fingerprint is a mismatch, and the
     * work does not run.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void sameKeyDifferentFingerprintIsMismatch() throws Exception {
        StoreFixture<C> f = fixture();
        IdempotencyKey key = IdempotencyKey.of("mismatch", "k1");
        f.inTx(f.idem, key, A, new Counting("first"), true);
        Counting other = new Counting("other");
        Outcome<String> outcome = f.inTx(f.idem, key, B, other, true);
        assertOutcome(Promise.MISMATCH, outcome, Outcome.Status.MISMATCH, null);
        assertThat(other.runs()).as(Promise.MISMATCH.broken("The work ran")).isZero();
        assertOutcome(Promise.MISMATCH, f.inTx(f.idem, key, Fingerprint.NONE, other, true), Outcome.Status.MISMATCH, null);
        assertOutcome(Promise.MISMATCH, f.inTx(f.idem, key, A, other, true), Outcome.Status.REPLAYED, "first");
    }

    /**
     * Contract 2 and 3.3 (docs/contract.md): at the end of the retention the key counts as new, and
     * the new record answers.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void expiredRecordRunsAgain() throws Exception {
        StoreFixture<C> f = fixture();
        IdempotencyKey key = IdempotencyKey.of("expiry", "k1");
        f.inTx(f.idem, key, A, new Counting("first"), true);
        f.clock.advance(RETENTION.minusMillis(1));
        assertOutcome(Promise.EXPIRY, f.inTx(f.idem, key, A, new Counting("early"), true), Outcome.Status.REPLAYED, "first");
        f.clock.advance(Duration.ofMillis(1));
        Counting late = new Counting("late");
        assertOutcome(Promise.EXPIRY, f.inTx(f.idem, key, B, late, true), Outcome.Status.EXECUTED, "late");
        assertThat(late.runs()).as(Promise.EXPIRY.broken("At the exact expiry, the work did not run")).isEqualTo(1);
        assertOutcome(Promise.EXPIRY, f.inTx(f.idem, key, B, new Counting("retry"), true), Outcome.Status.REPLAYED, "late");
    }

    /**
     * Contract 3.4 (docs/contract.md): the work's exception reaches the caller as it was thrown,
     * and nothing is recorded.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void workExceptionPassesThroughUnchangedAndRecordsNothing() throws Exception {
        StoreFixture<C> f = fixture();
        IdempotencyKey key = IdempotencyKey.of("work-exception", "k1");
        PlainFailure thrown = new PlainFailure("the work failed");
        C tx = f.open();
        Throwable caught = null;
        try {
            f.idem.execute(IdempotentCall.of(key, A), tx, () -> {
                throw thrown;
            });
        } catch (Throwable t) {
            caught = t;
        }
        // The caller should roll back; committing anyway must still record nothing.
        f.commit(tx);
        assertThat(caught).as(Promise.WORK_EXCEPTION.broken("The caller did not get the work's own exception")).isSameAs(thrown);
        assertThat(thrown.getSuppressed()).as(Promise.WORK_EXCEPTION.broken("Releasing the claim after the work failed threw (the engine"
                + " attaches that failure to the work's exception)")).isEmpty();
        Counting retry = new Counting("retry");
        assertOutcome(Promise.WORK_EXCEPTION, f.inTx(f.idem, key, A, retry, true), Outcome.Status.EXECUTED, "retry");
    }

    /**
     * Contract 3.4 (docs/contract.md): a final failure is recorded and replayed, and the work's
     * partial writes are undone. The partial write here is a store write: the failing work executes
     * a second key in the same transaction, which must not survive.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void finalFailureIsRecordedAndReplayedWithoutPartialWrites() throws Exception {
        StoreFixture<C> f = fixture();
        IdempotencyKey key = IdempotencyKey.of("final-failure", "k1");
        IdempotencyKey partial = IdempotencyKey.of("final-failure", "partial");
        C tx = f.open();
        Outcome<String> first;
        try {
            first = f.idem.execute(IdempotentCall.of(key, A), tx, () -> {
                f.idem.execute(IdempotentCall.of(partial, A), tx, () -> "partial write");
                throw new FinalFailure("card declined");
            });
        } catch (Throwable t) {
            f.rollback(tx);
            throw new AssertionError(Promise.FINAL_FAILURE.broken("execute threw " + t), t);
        }
        f.commit(tx);
        assertThat(first).as(Promise.FINAL_FAILURE.broken("The first attempt's outcome")).isInstanceOf(Outcome.Failed.class);
        Counting retry = new Counting("retry");
        Outcome<String> again = f.inTx(f.idem, key, A, retry, true);
        assertThat(again).as(Promise.FINAL_FAILURE.broken("The retry's outcome")).isInstanceOf(Outcome.Failed.class);
        Outcome.Failed<String> failed = (Outcome.Failed<String>) again;
        assertThat(failed.replayed()).as(Promise.FINAL_FAILURE.broken("The retry's failure is not marked replayed")).isTrue();
        assertThat(failed.errorType()).as(Promise.FINAL_FAILURE.broken("The replayed failure's type")).isEqualTo(FinalFailure.class.getName());
        assertThat(failed.errorMessage()).as(Promise.FINAL_FAILURE.broken("The replayed failure's message")).isEqualTo("card declined");
        assertThat(retry.runs()).as(Promise.FINAL_FAILURE.broken("The retry's work ran")).isZero();
        Counting partialRetry = new Counting("partial again");
        assertOutcome(Promise.FINAL_FAILURE, f.inTx(f.idem, partial, A, partialRetry, true), Outcome.Status.EXECUTED, "partial again");
    }

    /**
     * Contract 2 (docs/contract.md): the same id in two scopes is two keys.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void scopesAreSeparate() throws Exception {
        StoreFixture<C> f = fixture();
        IdempotencyKey tenant1 = IdempotencyKey.of("tenant-1", "order-7");
        IdempotencyKey tenant2 = IdempotencyKey.of("tenant-2", "order-7");
        f.inTx(f.idem, tenant1, A, new Counting("one"), true);
        assertOutcome(Promise.SCOPE, f.inTx(f.idem, tenant2, B, new Counting("two"), true), Outcome.Status.EXECUTED, "two");
        assertOutcome(Promise.SCOPE, f.inTx(f.idem, tenant1, A, new Counting("x"), true), Outcome.Status.REPLAYED, "one");
        assertOutcome(Promise.SCOPE, f.inTx(f.idem, tenant2, B, new Counting("x"), true), Outcome.Status.REPLAYED, "two");
    }

    /**
     * Contract 2 (docs/contract.md): key ids are exact; ids that differ in case, or by a trailing
     * character, are other keys.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void keysAreExactAndCaseSensitive() throws Exception {
        StoreFixture<C> f = fixture();
        List<IdempotencyKey> keys = new ArrayList<>();
        for (String id : List.of("order-7", "ORDER-7", "Order-7", "order-7.", "order-70")) {
            keys.add(IdempotencyKey.of("exact", id));
        }
        for (String scope : List.of("EXACT", "Exact", "exact.")) {
            keys.add(IdempotencyKey.of(scope, "order-7"));
        }
        for (IdempotencyKey key : keys) {
            assertOutcome(Promise.EXACT_KEYS, f.inTx(f.idem, key, A, new Counting("v-" + key), true), Outcome.Status.EXECUTED, "v-" + key);
        }
        for (IdempotencyKey key : keys) {
            assertOutcome(Promise.EXACT_KEYS, f.inTx(f.idem, key, A, new Counting("x"), false), Outcome.Status.REPLAYED, "v-" + key);
        }
    }

    /**
     * Contract 2 (docs/contract.md): a key as large as the store's limits allow
     * ({@link StoreFixture#limits()}, by default the policy's), of every accepted character, is kept
     * like any other, and apart from the keys that differ from it in its last character or in the
     * case of one letter, in the scope or in the id.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void keysOfTheLargestSizeAndEveryCharacterAreKeptApart() throws Exception {
        StoreFixture<C> f = fixture();
        String scope = Keys.ofLength(f.storeLimits.maxScopeLength(), 0);
        String id = Keys.ofLength(f.storeLimits.maxIdLength(), 7);
        List<IdempotencyKey> keys = new ArrayList<>(List.of(IdempotencyKey.of(scope, id), IdempotencyKey.of(scope, Keys.otherLast(id)),
                IdempotencyKey.of(scope, Keys.otherCase(id)), IdempotencyKey.of(Keys.otherLast(scope), id),
                IdempotencyKey.of(Keys.otherCase(scope), id)));
        List<IdempotencyKey> distinct = keys.stream().distinct().toList(); // a scope or id without a letter has no case variant
        keys.clear();
        keys.addAll(distinct);
        Promise p = Promise.KEY_LIMITS;
        for (int i = 0; i < keys.size(); i++) {
            IdempotencyKey key = keys.get(i);
            String value = "large-" + i;
            Outcome<String> first = limited(p, key, () -> f.inTx(f.idem, key, A, new Counting(value), true));
            assertOutcome(p, first, Outcome.Status.EXECUTED, value);
        }
        for (int i = 0; i < keys.size(); i++) {
            IdempotencyKey key = keys.get(i);
            Outcome<String> again = limited(p, key, () -> f.inTx(f.idem, key, A, new Counting("x"), false));
            assertOutcome(p, again, Outcome.Status.REPLAYED, "large-" + i);
        }
    }

    /**
     * Runs {@code call}; a failure of the store is reported as {@code p} broken for {@code key}.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    private static <T> T limited(Promise p, IdempotencyKey key, java.util.concurrent.Callable<T> call) throws Exception {
        try {
            return call.call();
        } catch (dev.idempotency.IdempotencyStoreException e) {
            throw new AssertionError(p.broken("Executing key " + Keys.describe(key) + " failed in the store: " + e), e);
        }
    }

    /**
     * Contract 3.5 (docs/contract.md): a result as large as the store's limit allows
     * ({@link StoreFixture#limits()}, by default the policy's {@code maxResultBytes}) is recorded and
     * replayed, every byte.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void resultOfTheLargestSizeIsRecordedAndReplayedExactly() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.RESULT_SIZE;
        byte[] largest = Results.bytesOfSize(f.storeLimits.maxResultBytes(), 1);
        IdempotencyKey key = IdempotencyKey.of("results", "largest");
        String label = Results.label(largest);
        Outcome<Object> first = limited(p, key, () -> f.inTxAny(key, A, null, () -> largest, true));
        require(describe(first).equals("EXECUTED(" + label + ")"), p, () -> "The first execution of work returning " + label
                + " gave " + describe(first));
        Outcome<Object> again = limited(p, key, () -> f.inTxAny(key, A, null, () -> new byte[0], false));
        require(describe(again).equals("REPLAYED(" + label + ")"), p, () -> "The retry of work that returned " + label
                + " and committed gave " + describe(again));
    }

    /**
     * Contract 3.5 (docs/contract.md): complete writes the times it is given. Time passes while the
     * work runs (the clock moves by 20 minutes and 7 ms between the claim and the completion, and
     * starts off a whole second): the record keeps the claim's createdAt, the completion's
     * completedAt, and expires its retention after the completion, to the millisecond.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void completionTimesAreWrittenAsGivenWhenTimePassesDuringTheWork() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.COMPLETION_TIMES;
        IdempotencyKey key = IdempotencyKey.of("times", "slow-work");
        f.clock.advance(Duration.ofMillis(1234));
        Instant claimedAt = f.clock.instant();
        Duration during = Duration.ofMinutes(20).plusMillis(7);
        Instant completedAt = claimedAt.plus(during);
        Instant expiresAt = completedAt.plus(RETENTION);
        f.inTx(f.idem, key, A, () -> {
            f.clock.advance(during);
            return "slow";
        }, true);
        StoredRecord r = f.committedRecord(key, A);
        String expected = "the record claimed at " + claimedAt + ", completed at " + completedAt + " (the clock moved "
                + Operations.duration(during) + " while the work ran), expiring at " + expiresAt;
        require(r != null, p, () -> "Expected " + expected + "; the store found no record at " + f.clock.instant());
        require(claimedAt.equals(r.createdAt()) && completedAt.equals(r.completedAt()) && expiresAt.equals(r.expiresAt()), p,
                () -> "Expected " + expected + "; the store holds createdAt " + r.createdAt() + ", completedAt " + r.completedAt()
                        + ", expiresAt " + r.expiresAt() + " (now is " + f.clock.instant() + ")");
        f.clock.set(claimedAt.plus(RETENTION));
        assertOutcome(p, f.inTx(f.idem, key, A, new Counting("early"), false), Outcome.Status.REPLAYED, "slow");
        f.clock.set(expiresAt.minusMillis(1));
        assertOutcome(p, f.inTx(f.idem, key, A, new Counting("early"), false), Outcome.Status.REPLAYED, "slow");
        f.clock.set(expiresAt);
        assertOutcome(Promise.EXPIRY, f.inTx(f.idem, key, A, new Counting("again"), false), Outcome.Status.EXECUTED, "again");
    }

    /**
     * Contract 3.2 (docs/contract.md): a transaction that has ended (committed, or rolled back)
     * cannot carry a record. A failure here is also what a commit or rollback hook that does not
     * end the transaction looks like (for JDBC: one that does not close the connection); the
     * message says so.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void endedTransactionIsRefused() throws Exception {
        StoreFixture<C> f = fixture();
        for (boolean committed : List.of(true, false)) {
            C tx = f.open();
            if (committed) {
                f.commit(tx);
            } else {
                f.rollback(tx);
            }
            IdempotencyKey key = IdempotencyKey.of("ended", committed ? "committed" : "rolled-back");
            Counting work = new Counting("late");
            Throwable thrown = catchThrowable(() -> f.idem.execute(IdempotentCall.of(key, A), tx, work));
            String how = committed ? "commit(tx)" : "rollback(tx)";
            assertThat(thrown).as(Promise.TRANSACTION_REQUIRED.broken("execute on a transaction that the " + how + " hook ended was not"
                    + " refused (it " + (thrown == null ? "ran" : "threw " + thrown) + "). Either the store's checkTransaction does not"
                    + " refuse an ended transaction, or the " + how + " hook does not end it: " + Promise.HOOKS.broken("")))
                    .isInstanceOf(TransactionRequiredException.class);
            assertThat(work.runs()).as(Promise.TRANSACTION_REQUIRED.broken("The work ran")).isZero();
        }
    }

    /**
     * The hooks: begin() gives a new open transaction on each call, usable at once, and commit(tx)
     * and rollback(tx) end it, so that the store refuses it afterwards.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void hooksBeginDistinctTransactionsAndEndThem() throws Exception {
        StoreFixture<C> f = fixture();
        IdempotencyKey key = IdempotencyKey.of("hooks", "k1");
        C first = f.open();
        C second;
        try {
            second = f.open();
        } catch (Throwable t) {
            f.rollbackQuietly(first, t);
            throw t;
        }
        try {
            assertThat(first != second && !first.equals(second)).as(Promise.HOOKS.broken("begin() returned the same transaction twice,"
                    + " while the first was still open: " + first)).isTrue();
            for (C tx : List.of(first, second)) {
                Throwable refused = catchThrowable(() -> f.transactional().checkTransaction(tx, key));
                assertThat(refused).as(Promise.HOOKS.broken("The store refused a transaction just returned by begin(): " + refused
                        + ". For JDBC, begin() must turn auto-commit off")).isNull();
            }
        } finally {
            f.commit(first);
            f.rollback(second);
        }
        for (C tx : List.of(first, second)) {
            String how = tx == first ? "commit(tx)" : "rollback(tx)";
            Throwable refused = catchThrowable(() -> f.transactional().checkTransaction(tx, key));
            assertThat(refused).as(Promise.HOOKS.broken("After the " + how + " hook, the store still accepts the transaction: the hook"
                    + " does not end it (or the store does not refuse an ended transaction: see endedTransactionIsRefused)"))
                    .isInstanceOf(TransactionRequiredException.class);
        }
    }

    /**
     * Contract 3.2 (docs/contract.md): every unusable transaction that
     * {@link StoreFixture#unusableTransactions()} makes (auto-commit, closed, read-only, another store's, ...)
     * is refused with TransactionRequiredException before anything is written: the work does not
     * run, and a retry in a good transaction runs it.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void unusableTransactionsAreRefusedBeforeAnythingIsWritten() throws Exception {
        StoreFixture<C> f = fixture();
        List<UnusableTransaction<C>> unusable = f.unusableTransactions();
        assumeTrue(!unusable.isEmpty(), "unusableTransactions() names none: only ended transactions are tried (endedTransactionIsRefused)");
        int n = 0;
        for (UnusableTransaction<C> u : unusable) {
            IdempotencyKey key = IdempotencyKey.of("unusable", "k" + ++n);
            Counting work = new Counting("written through " + u.kind());
            Throwable thrown;
            try (AutoCloseable discard = u.discard()) {
                thrown = catchThrowable(() -> f.idem.execute(IdempotentCall.of(key, A), u.transaction(), work));
            }
            assertThat(thrown).as(Promise.TRANSACTION_REQUIRED.broken("execute on " + u.kind() + " " + (thrown == null ? "ran"
                    : "threw " + thrown))).isInstanceOf(TransactionRequiredException.class);
            assertThat(work.runs()).as(Promise.TRANSACTION_REQUIRED.broken("The work ran on " + u.kind())).isZero();
            assertOutcome(Promise.TRANSACTION_REQUIRED, f.inTx(f.idem, key, A, new Counting("retry"), false), Outcome.Status.EXECUTED, "retry");
        }
    }

    /**
     * Contract 3.5 (docs/contract.md): the result of every built-in codec's type, {@code null},
     * empty and large byte arrays, and a custom codec's, is recorded and replayed exactly.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void everyResultTypeIsRecordedAndReplayedExactly() throws Exception {
        StoreFixture<C> f = fixture();
        List<Object> samples = Results.samples(f.storeLimits.maxResultBytes());
        for (int i = 0; i < samples.size(); i++) {
            Object value = samples.get(i);
            IdempotencyKey key = IdempotencyKey.of("results", "k" + i);
            ResultCodec<Object> codec = value instanceof Results.Receipt ? receipts() : null;
            String label = Results.label(value);
            Outcome<Object> first = f.inTxAny(key, A, codec, () -> value, true);
            assertThat(describe(first)).as(Promise.RESULT.broken("The first execution of work returning " + label)).isEqualTo("EXECUTED(" + label + ")");
            Outcome<Object> again = retryOfCommitted(key, codec, value, label);
            assertThat(describe(again)).as(Promise.RESULT.broken("The retry of work that returned " + label + " and committed"))
                    .isEqualTo("REPLAYED(" + label + ")");
        }
        IdempotencyKey none = IdempotencyKey.of("results", "none-codec");
        @SuppressWarnings("unchecked")
        ResultCodec<Object> noneCodec = (ResultCodec<Object>) (ResultCodec<?>) ResultCodec.none();
        f.inTxAny(none, A, noneCodec, () -> null, true);
        assertThat(describe(retryOfCommitted(none, noneCodec, null, "null through the codec none"))).as(Promise.RESULT.broken(
                "The retry of work run with the codec none")).isEqualTo("REPLAYED(null)");
    }

    /**
     * The retry of a committed execution: a record still in progress there breaks the result promise, by name.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    private Outcome<Object> retryOfCommitted(IdempotencyKey key, ResultCodec<Object> codec, Object value, String label) throws Exception {
        StoreFixture<C> f = fixture();
        try {
            return f.inTxAny(key, A, codec, () -> value, false);
        } catch (AbandonedClaimException stillInProgress) {
            throw new AssertionError(Promise.RESULT.broken("The retry of work that returned " + label + " and committed found the"
                    + " record still in progress: " + stillInProgress.getMessage()), stillInProgress);
        }
    }

    /**
     * Contract 3.3 (docs/contract.md): a record in progress that an attempt can see is answered
     * with its own fingerprint: in the transaction that claimed it, a nested call of the same key
     * with another fingerprint gets Mismatch and one with the same fingerprint InProgress (or
     * NestedKeyException: the engine tells the transaction's own claim, met by its own work, from one
     * committed without its result); for a LeasingStore, a
     * committed lease claim (in progress, lease live) answers a transactional attempt the same way.
     * The engine compares the fingerprints: the store must hand back the record as it is, with its
     * own fingerprint.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void inProgressRecordAnswersMismatchToAnotherFingerprint() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.MISMATCH_IN_PROGRESS;
        IdempotencyKey key = IdempotencyKey.of("in-progress", "nested");
        Counting nested = new Counting("nested");
        AtomicReference<Outcome<String>> other = new AtomicReference<>();
        AtomicReference<Outcome<String>> same = new AtomicReference<>();
        AtomicReference<NestedKeyException> sameRefused = new AtomicReference<>();
        C tx = f.open();
        Outcome<String> outer;
        try {
            outer = f.idem.execute(IdempotentCall.of(key, A), tx, () -> {
                other.set(f.idem.execute(IdempotentCall.of(key, B), tx, nested));
                try {
                    same.set(f.idem.execute(IdempotentCall.of(key, A), tx, nested));
                } catch (NestedKeyException ownClaim) {
                    sameRefused.set(ownClaim); // the engine knows the claim is its own work's, not one committed without its result
                }
                return "outer";
            });
        } catch (Throwable t) {
            f.rollbackQuietly(tx, t);
            throw new AssertionError(p.broken("A nested execute of the key, in the transaction that claimed it, threw " + t), t);
        }
        f.commit(tx);
        assertOutcome(p, other.get(), Outcome.Status.MISMATCH, null);
        if (sameRefused.get() == null) {
            assertOutcome(p, same.get(), Outcome.Status.IN_PROGRESS, null);
        }
        assertThat(nested.runs()).as(p.broken("The nested call's work ran")).isZero();
        assertOutcome(p, outer, Outcome.Status.EXECUTED, "outer");
        assertOutcome(p, f.inTx(f.idem, key, A, new Counting("retry"), false), Outcome.Status.REPLAYED, "outer");
        if (f.store instanceof LeasingStore) {
            IdempotencyKey leased = IdempotencyKey.of("in-progress", "leased");
            f.leaseHeldFor(leased);
            assertOutcome(p, f.inTx(f.idem, leased, B, nested, false), Outcome.Status.MISMATCH, null);
            assertOutcome(p, f.inTx(f.idem, leased, A, nested, false), Outcome.Status.IN_PROGRESS, null);
            assertThat(nested.runs()).as(p.broken("The work ran on a key whose lease is live")).isZero();
        }
    }

    /**
     * Contract 8 and 2 (docs/contract.md): purge judges expiry to the millisecond, as claims do, and
     * by the record's own expiry: a record completed 20 minutes after its claim (the clock moved
     * while the work ran) is kept 1 ms before its expiry, past its claim time plus the retention,
     * and removed at it.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void purgeIsExactToTheMillisecond() throws Exception {
        StoreFixture<C> f = fixture();
        IdempotencyKey key = IdempotencyKey.of("purge-edge", "k1");
        Duration during = Duration.ofMinutes(20);
        Instant claimedAt = f.clock.instant();
        f.inTx(f.idem, key, A, () -> {
            f.clock.advance(during);
            return "first";
        }, true);
        f.clock.advance(RETENTION.minusMillis(1));
        assertThat(f.purge(10)).as(Promise.PURGE.broken("1 ms before the record's expiry (" + f.clock.instant().plusMillis(1)
                + "; claimed at " + claimedAt + " and completed " + Operations.duration(during) + " later), purge removed it: a purge"
                + " must judge the record's own expiry, not its claim time plus the retention")).isZero();
        assertOutcome(Promise.PURGE, f.inTx(f.idem, key, A, new Counting("x"), false), Outcome.Status.REPLAYED, "first");
        f.clock.advance(Duration.ofMillis(1));
        assertThat(f.purge(10)).as(Promise.PURGE.broken("At the record's exact expiry, purge must remove it")).isEqualTo(1);
        assertOutcome(Promise.PURGE, f.inTx(f.idem, key, A, new Counting("again"), false), Outcome.Status.EXECUTED, "again");
    }

    /**
     * Contract 8 (docs/contract.md): a record in progress is purged only once its own expiry has
     * passed, in every state a purge can meet it: the purging transaction's own claim (a purge inside
     * the work), another open transaction's claim, a claim committed without its result (a work that
     * committed its own transaction; purged at its expiry, to the millisecond), and, for a
     * {@link LeasingStore}, a lease that has ended. Each time an expired record of another key is
     * there too, and must be the only one removed.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void purgeInEveryStateRemovesOnlyExpiredRecords() throws Exception {
        StoreFixture<C> f = fixture();
        Promise p = Promise.PURGE;
        String oneExpired = ", with one expired record of another key, removed ";

        // 1. Inside the claim's own transaction.
        expiredRecord("old-1");
        IdempotencyKey own = IdempotencyKey.of("purge-states", "own-claim");
        AtomicInteger removed = new AtomicInteger(-1);
        C tx = f.open();
        Outcome<String> outcome;
        try {
            outcome = f.idem.execute(IdempotentCall.of(own, A), tx, () -> {
                removed.set(f.idem.purgeExpired(tx, 10));
                return "own";
            });
        } catch (Throwable t) {
            f.rollbackQuietly(tx, t);
            throw new AssertionError(p.broken("A purge inside the work, in the transaction that claimed " + own + ", left the claim"
                    + " unusable: " + t), t);
        }
        f.commit(tx);
        Instant now = f.clock.instant();
        require(removed.get() == 1, p, () -> "A purge inside the work, in the transaction that claimed " + own + " (in progress,"
                + " expiring at " + now.plus(RETENTION) + ")" + oneExpired + removed.get() + " records (now is " + now + ")");
        assertOutcome(p, outcome, Outcome.Status.EXECUTED, "own");
        assertOutcome(p, f.inTx(f.idem, own, A, new Counting("x"), false), Outcome.Status.REPLAYED, "own");

        // 2. While another transaction holds a claim: the purge may wait for it, or not.
        expiredRecord("old-2");
        IdempotencyKey held = IdempotencyKey.of("purge-states", "held");
        CountDownLatch claimed = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        Future<Outcome<String>> holder = f.threads.submit(() -> f.inTx(f.idem, held, A, () -> {
            claimed.countDown();
            finish.await(StoreFixture.WAIT_SECONDS, TimeUnit.SECONDS);
            return "held";
        }, true));
        Future<Integer> purge = null;
        try {
            require(claimed.await(StoreFixture.WAIT_SECONDS, TimeUnit.SECONDS), p, () -> "The holder of " + held + " never ran its work");
            purge = f.threads.submit(() -> f.purge(10));
            try {
                purge.get(200, TimeUnit.MILLISECONDS); // a chance to purge while the claim is held; waiting for it is right too
            } catch (java.util.concurrent.TimeoutException waits) {
                // it waits for the holder's lock
            }
        } finally {
            finish.countDown();
        }
        Outcome<String> heldOutcome = StoreFixture.await(p, holder);
        int whileHeld = StoreFixture.await(p, purge);
        require(whileHeld == 1, p, () -> "A purge while another transaction held a claim of " + held + oneExpired + whileHeld
                + " records (now is " + f.clock.instant() + ")");
        assertOutcome(p, heldOutcome, Outcome.Status.EXECUTED, "held");
        assertOutcome(p, f.inTx(f.idem, held, A, new Counting("x"), false), Outcome.Status.REPLAYED, "held");

        // 3. After a claim was committed without its result: a work that committed its own transaction.
        expiredRecord("old-3");
        IdempotencyKey committedClaim = IdempotencyKey.of("purge-states", "committed-claim");
        Instant claimedAt = f.clock.instant();
        C ended = f.open();
        catchThrowable(() -> f.idem.execute(IdempotentCall.of(committedClaim, A), ended, () -> {
            f.commit(ended);
            return "lost";
        }));
        int afterCommittedClaim = f.purge(10);
        require(afterCommittedClaim == 1, p, () -> "A purge after the claim of " + committedClaim + " was committed without its"
                + " result (in progress, expiring at " + claimedAt.plus(RETENTION) + ")" + oneExpired + afterCommittedClaim
                + " records (now is " + f.clock.instant() + ")");
        Counting again = new Counting("twice");
        catchThrowable(() -> f.inTx(f.idem, committedClaim, A, again, false));
        require(again.runs() == 0, p, () -> "After a purge, the work of " + committedClaim + " ran a second time: its claim,"
                + " committed without its result and not expired, was gone");
        f.clock.set(claimedAt.plus(RETENTION).minusMillis(1));
        require(f.purge(10) == 0, p, () -> "1 ms before the expiry of the claim committed without its result, purge removed it");
        f.clock.set(claimedAt.plus(RETENTION));
        require(f.purge(10) == 1, p, () -> "At the exact expiry of the claim committed without its result, purge must remove it");

        // 4. At a lease's end.
        if (f.store instanceof LeasingStore<C> leasing) {
            // The lease's times are the store's clock's (a database server's): the kit's clock is set to it first.
            f.clean();
            IdempotencyKey leased = IdempotencyKey.of("purge-states", "ended-lease");
            LeaseClaim.Acquired first = StoreFixture.acquired(Promise.LEASE_NEW, f.committed(t -> leasing.claimLease(t,
                    new LeaseRequest(leased, A, "purge-w1", StoreFixture.SHORT_LEASE, RETENTION.multipliedBy(2), StoreFixture.LOCK_TIMEOUT))),
                    1, null);
            f.clock.set(first.now());
            f.inTx(f.idem, IdempotencyKey.of("purge-states", "old-4"), A, new Counting("old-4"), true);
            f.clock.advance(RETENTION);
            f.letLeaseRunOut(StoreFixture.SHORT_LEASE);
            int atLeaseEnd = f.purge(10);
            require(atLeaseEnd == 1, p, () -> "A purge once the lease of " + leased + " had ended (in progress, retained until "
                    + first.now().plus(RETENTION.multipliedBy(2)) + ")" + oneExpired + atLeaseEnd + " records (now is " + f.clock.instant() + ")");
            LeaseClaim next = f.claimLease(leased, A, "purge-w2", StoreFixture.LIVE_LEASE, true);
            require(next instanceof LeaseClaim.Acquired a && a.attempt() == 2, p, () -> "After a purge at the lease's end, the next"
                    + " claim of " + leased + " must take the record over as attempt 2, but got " + next);
        }
    }

    /**
     * Empties the store, commits a record of {@code id}, then moves the clock to its expiry: it is
     * the one record, expired exactly now.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    private void expiredRecord(String id) throws Exception {
        StoreFixture<C> f = fixture();
        f.clean();
        f.inTx(f.idem, IdempotencyKey.of("purge-states", id), A, new Counting(id), true);
        f.clock.advance(RETENTION);
    }

    /**
     * Contract 8 (docs/contract.md): purging removes expired records only, in batches of at most
     * the limit, and counts them.
     *
     * @throws Exception if the store, a hook or the engine fails
     */
    @Test
    default void purgeRemovesOnlyExpiredRecordsAndReportsHowMany() throws Exception {
        StoreFixture<C> f = fixture();
        for (int i = 0; i < 3; i++) {
            f.inTx(f.idem, IdempotencyKey.of("purge", "old-" + i), A, new Counting("old"), true);
        }
        f.clock.advance(RETENTION.dividedBy(2));
        for (int i = 0; i < 2; i++) {
            f.inTx(f.idem, IdempotencyKey.of("purge", "new-" + i), A, new Counting("new-" + i), true);
        }
        assertThat(f.purge(10)).as(Promise.PURGE.broken("Nothing has expired yet, but purge removed records")).isZero();
        f.clock.advance(RETENTION.dividedBy(2));
        assertThat(f.purge(2)).as(Promise.PURGE.broken("3 records expired (exactly now), purge with limit 2")).isEqualTo(2);
        assertThat(f.purge(2)).as(Promise.PURGE.broken("1 expired record left, purge with limit 2")).isEqualTo(1);
        assertThat(f.purge(2)).as(Promise.PURGE.broken("No expired record left")).isZero();
        for (int i = 0; i < 2; i++) {
            assertOutcome(Promise.PURGE, f.inTx(f.idem, IdempotencyKey.of("purge", "new-" + i), A, new Counting("x"), false),
                    Outcome.Status.REPLAYED, "new-" + i);
        }
    }
}
