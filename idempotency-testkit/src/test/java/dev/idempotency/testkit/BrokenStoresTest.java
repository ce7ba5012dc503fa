package dev.idempotency.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.PendingOperation;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.LeaseOnlyStore;
import dev.idempotency.spi.LeasedCompletion;
import dev.idempotency.spi.NoTransaction;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.RecoveryPoint;
import dev.idempotency.spi.StoredRecord;
import dev.idempotency.spi.TransactionRunner;
import dev.idempotency.spi.TxSavepoint;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.DiscoverySelector;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;
import org.opentest4j.TestAbortedException;

/**
 * Proof that the contract is not vacuous: each deliberately broken store below must fail it, with a
 * message naming the promise it breaks, and must fail the part of the contract that holds that
 * promise when the part runs alone (as for a store author who chose only some parts). The broken contracts are nested static classes, which the
 * build's test run does not pick up by itself; they run here through the JUnit Platform launcher.
 */
class BrokenStoresTest {

    private static final String SEQUENCES = "randomSequencesKeepTheContract";
    private static final String CONCURRENCY = "concurrentAttemptsExecuteAtMostOncePerKey";
    private static final String LEASE_SEQUENCES = "randomLeaseSequencesKeepTheContract";
    private static final String CHUNKS = "randomChunksKeepTheContract";
    private static final String WITHDRAW = "withdrawnClaimLeavesNothingOfTheKeyAndAStaleWithdrawalChangesNothing";
    /** The lease-mode tests of the contract: skipped for a store that keeps no leases. */
    private static final int LEASE_TESTS = 20;
    /** The tests of {@link RecoveryContract}, which a store without leases skips too. */
    private static final int RECOVERY_TESTS = 4;

    @Test
    void theReferenceStorePassesWhenRunTheSameWay() {
        Run run = run(selectClass(InMemoryStoreContractTest.class));
        assertThat(run.summary.getTestsFoundCount()).isGreaterThanOrEqualTo(15 + LEASE_TESTS);
        assertThat(run.summary.getTestsAbortedCount()).as("tests skipped for the reference store").isZero();
        assertThat(run.messages).as("failures of the reference store").isEmpty();
    }

    @Test
    void aStoreWithoutLeasesSkipsLeaseModeOnly() {
        Run run = run(selectClass(WithoutLeases.class));
        assertThat(run.messages).as("failures of the reference store seen without its leases").isEmpty();
        assertThat(run.summary.getTestsAbortedCount()).as("lease-mode tests skipped").isEqualTo(LEASE_TESTS + RECOVERY_TESTS);
        assertThat(run.summary.getTestsSucceededCount()).as("transactional-mode tests run").isGreaterThanOrEqualTo(15);
    }

    @Test
    void aStoreWithoutLeasesThatChoosesALeasePartFailsIt() throws Exception {
        LeasePartsWithoutLeases chosen = new LeasePartsWithoutLeases();
        chosen.store = chosen.createStore(chosen.clock());
        assertThatThrownBy(chosen::leasing).isInstanceOf(AssertionError.class)
                .hasMessageContaining("keeps no leases (it is not a LeasingStore), but the test class implements a lease part");
        WithoutLeases whole = new WithoutLeases();
        whole.store = whole.createStore(whole.clock());
        assertThatThrownBy(whole::leasing).as("the whole contract skips the lease parts instead").isInstanceOf(TestAbortedException.class);
    }

    @Test
    void theWholeContractIsEveryPartAndEachTestIsInOnePart() {
        List<Class<?>> parts = List.of(ExampleContract.class, ConcurrencyContract.class, StatefulContract.class, ChunkContract.class,
                WriteLastContract.class, LeasePrimitiveContract.class, LeasedCallContract.class, RecoveryContract.class);
        assertThat(IdempotencyStoreContract.class.getInterfaces()).containsExactlyInAnyOrderElementsOf(parts);
        List<String> tests = new ArrayList<>();
        for (Class<?> part : parts) {
            assertThat(ContractPart.class).as(part.getSimpleName()).isAssignableFrom(part);
            assertThat(testsOf(InMemoryStoreContractTest.class, part)).as("tests of " + part.getSimpleName()).isNotEmpty()
                    .allSatisfy(t -> tests.add(((org.junit.platform.engine.discovery.MethodSelector) t).getMethodName()));
        }
        assertThat(tests).as("each test in one part").doesNotHaveDuplicates().hasSize(60);
        assertThat(testsOf(InMemoryStoreContractTest.class, LeasePrimitiveContract.class).size()
                + testsOf(InMemoryStoreContractTest.class, LeasedCallContract.class).size()).isEqualTo(LEASE_TESTS);
    }

    @Test
    void completionWithoutFencingFails() {
        assertFails(NoFencing.class, LeasePrimitiveContract.class, Promise.FENCING);
        assertFails(NoFencing.class, "staleOwnerGetsLeaseLostAndItsFinishIsNotRecorded", Promise.LEASE_LOST);
        assertFails(NoFencing.class, LeasedCallContract.class, Promise.LEASE_LOST);
        assertFails(NoFencing.class, LEASE_SEQUENCES, Promise.FENCING);
    }

    @Test
    void aStoreThatKeepsTheDefaultWithdrawalPasses() {
        Run run = run(selectMethod(DefaultWithdrawal.class, WITHDRAW));
        assertThat(run.summary.getTestsSucceededCount()).as("the withdrawal test run").isEqualTo(1);
        assertThat(run.messages).as("failures of a store that only ends the lease, as the default does").isEmpty();
    }

    @Test
    void aWithdrawalWithoutTheTokensFenceFails() {
        assertFails(WithdrawUnfenced.class, WITHDRAW, Promise.LEASE_WITHDRAW);
    }

    @Test
    void aWithdrawalThatKeepsTheRecordButSaysItDeletedItFails() {
        assertFails(WithdrawKeepsRecord.class, WITHDRAW, Promise.LEASE_WITHDRAW);
    }

    @Test
    void pagesThatStartOverFail() {
        assertFails(PagesStartOver.class, RecoveryContract.class, Promise.PENDING_PAGES);
    }

    @Test
    void anEnlistWithoutTheTokensFenceFails() {
        assertFails(EnlistUnfenced.class, RecoveryContract.class, Promise.PENDING_LISTED);
    }

    @Test
    void aDelistThatKeepsTheEntryFails() {
        assertFails(DelistIgnored.class, RecoveryContract.class, Promise.PENDING_LISTED);
        assertFails(DelistIgnored.class, "theRecoveryWorkerResumesAnAbandonedOperationOnce", Promise.RECOVERED);
    }

    @Test
    void takeOverOfALiveLeaseFails() {
        assertFails(LiveTakeOver.class, LeasePrimitiveContract.class, Promise.LEASE_LIVE);
        assertFails(LiveTakeOver.class, "leaseClaimWaitsForAnOpenClaimOfTheKey", Promise.LEASE_ATOMIC);
        assertFails(LiveTakeOver.class, LEASE_SEQUENCES, null);
    }

    @Test
    void takeOverOfAnotherFingerprintFails() {
        assertFails(MismatchTakenOver.class, LeasePrimitiveContract.class, Promise.LEASE_MISMATCH);
        assertFails(MismatchTakenOver.class, LEASE_SEQUENCES, Promise.LEASE_MISMATCH);
    }

    @Test
    void recoveryPointForgottenByATakeOverFails() {
        assertFails(TakeOverForgetsRecoveryPoint.class, LeasePrimitiveContract.class, Promise.RECOVERY_POINT);
        assertFails(TakeOverForgetsRecoveryPoint.class, "crashAfterPrepareResumesWithTheRecordedValue", Promise.LEASED_RESUME);
        // The quick lease property does not meet a checkpoint followed by a take-over in every run:
        // the example tests name this store every time.
    }

    @Test
    void recoveryPointSetBackByAReleaseFails() {
        // The quick lease property meets this one too rarely (two checkpoints, a release, a claim, in
        // that order on one key); the example test names it every time, and a deep run finds it too.
        assertFails(ReleaseRewindsRecoveryPoint.class, LeasePrimitiveContract.class, Promise.RECOVERY_POINT);
    }

    @Test
    void attemptsThatNeverCountFail() {
        assertFails(AttemptsNeverCount.class, LeasePrimitiveContract.class, Promise.LEASE_TAKE_OVER);
        assertFails(AttemptsNeverCount.class, "leasedCallThatThrowsLeavesTheKeyClaimableAtOnce", Promise.LEASED_CALL_THROWS);
        assertFails(AttemptsNeverCount.class, LEASE_SEQUENCES, Promise.LEASE_TAKE_OVER);
    }

    @Test
    void writeLastThatIgnoresTheRecordItFindsFails() {
        assertFails(WriteLastIgnoresRecord.class, "writeLastWritesOnlyANewKeyAndHoldsOnlyOnceCommitted", Promise.WRITE_LAST);
        assertFails(WriteLastIgnoresRecord.class, "writeLastWaitsForAnOpenHolderOfTheKey", Promise.WRITE_LAST);
        assertFails(WriteLastIgnoresRecord.class, WriteLastContract.class, Promise.WRITE_LAST);
    }

    @Test
    void aChunkThatFailsAtABusyKeyFails() {
        assertFails(BusyKeyFailsTheChunk.class, "chunkWithAKeyHeldPastTheLockTimeoutAnswersInProgressForItAndCommitsTheRest",
                Promise.CHUNK_LOCK_TIMEOUT);
    }

    @Test
    void checkThenInsertWithoutAtomicityFails() {
        assertFails(CheckThenInsert.class, ConcurrencyContract.class, Promise.HOLDER_COMMITS);
        assertFails(CheckThenInsert.class, CONCURRENCY, Promise.AT_MOST_ONCE);
        assertFails(CheckThenInsert.class, "chunkWhoseKeysAnOpenTransactionHoldsWaitsAndReplaysOnceItCommits", Promise.CHUNK_HOLDER);
    }

    @Test
    void wrongFingerprintFails() {
        assertFails(WrongFingerprint.class, ExampleContract.class, Promise.MISMATCH);
        // The sequences meet it either at a committed record or at the transaction's own claim, by a nested call.
        assertFails(WrongFingerprint.class, SEQUENCES, Promise.MISMATCH, Promise.MISMATCH_IN_PROGRESS);
    }

    @Test
    void ignoredExpiryFails() {
        assertFails(ExpiryIgnored.class, ExampleContract.class, Promise.EXPIRY);
        assertFails(ExpiryIgnored.class, SEQUENCES, Promise.EXPIRY);
        assertFails(ExpiryIgnored.class, StatefulContract.class, Promise.EXPIRY);
    }

    @Test
    void rolledBackRecordVisibleToOthersFails() {
        assertFails(DirtyReads.class, ConcurrencyContract.class, Promise.HOLDER_ROLLS_BACK);
        assertFails(DirtyReads.class, CONCURRENCY, null);
    }

    @Test
    void ignoredScopeFails() {
        assertFails(ScopeIgnored.class, ExampleContract.class, Promise.SCOPE);
        assertFails(ScopeIgnored.class, SEQUENCES, Promise.SCOPE);
    }

    @Test
    void caseInsensitiveKeysFail() {
        assertFails(CaseInsensitive.class, ExampleContract.class, Promise.EXACT_KEYS);
        assertFails(CaseInsensitive.class, SEQUENCES, Promise.EXACT_KEYS);
    }

    @Test
    void purgeOfUnexpiredRecordsFails() {
        assertFails(PurgeUnexpired.class, ExampleContract.class, Promise.PURGE);
        assertFails(PurgeUnexpired.class, SEQUENCES, Promise.PURGE);
    }

    @Test
    void completionThatOverwritesOutsideTheTransactionFails() {
        assertFails(CompletionOutsideTransaction.class, ExampleContract.class, Promise.ROLLBACK);
        assertFails(CompletionOutsideTransaction.class, "chunkRolledBackLeavesNothing", Promise.CHUNK_ROLLBACK);
        // The sequences may meet the leaked record first through another promise (a purge that
        // removes a record the model never committed): any named failure will do there.
        assertFails(CompletionOutsideTransaction.class, SEQUENCES, null);
    }

    @Test
    void savepointThatKeepsPartialWritesFails() {
        assertFails(NoSavepoint.class, ExampleContract.class, Promise.FINAL_FAILURE);
        assertFails(NoSavepoint.class, "finalFailureOfOneItemInAChunkIsRecordedForThatItemAlone", Promise.CHUNK_FINAL_FAILURE);
    }

    // ---- the flaws a store author planted, which the contract once missed ----------------------------

    @Test
    void expiredRecordTakenOverWithoutCheckingAgainUnderTheLockFails() {
        // Only concurrent attempts on a key whose record has just expired meet this flaw.
        assertFails(ExpiredTakeOverUnchecked.class, CONCURRENCY, Promise.AT_MOST_ONCE);
    }

    @Test
    void nullResultLeftInProgressFails() {
        assertFails(NullResultLeftInProgress.class, ExampleContract.class, Promise.RESULT);
        assertFails(NullResultLeftInProgress.class, SEQUENCES, null);
    }

    @Test
    void purgeOfRecordsThatExpireWithinNineteenMinutesFails() {
        assertFails(PurgeNineteenMinutesAhead.class, ExampleContract.class, Promise.PURGE);
        assertFails(PurgeNineteenMinutesAhead.class, SEQUENCES, Promise.PURGE);
    }

    @Test
    void fingerprintNotComparedWhileInProgressFails() {
        assertFails(InProgressFingerprintIgnored.class, ExampleContract.class, Promise.MISMATCH_IN_PROGRESS);
    }

    @Test
    void ignoredLockTimeoutFails() {
        assertFails(LockTimeoutIgnored.class, "concurrentHolderPastTheLockTimeoutGivesInProgress", Promise.LOCK_TIMEOUT);
    }

    @Test
    void autoCommitTransactionAcceptedFails() {
        assertFails(AutoCommitAccepted.class, "unusableTransactionsAreRefusedBeforeAnythingIsWritten", Promise.TRANSACTION_REQUIRED);
    }

    @Test
    void purgeByCreationTimeNotExpiryFails() {
        assertFails(PurgeByCreationTime.class, "purgeIsExactToTheMillisecond", Promise.PURGE);
        assertFails(PurgeByCreationTime.class, ExampleContract.class, Promise.PURGE);
    }

    @Test
    void chunkClaimsThatLockInAnotherOrderFail() {
        assertFails(ChunkLockOrderDiffers.class, "overlappingChunksClaimedAtOnceWaitForEachOtherInsteadOfDeadlocking",
                Promise.CHUNK_LOCK_ORDER);
    }

    @Test
    void anExtendRefusedOnceTheLeaseEndedFails() {
        assertFails(ExtendOnlyWhileLive.class, "extendMovesTheLeaseEndForward", Promise.LEASE_EXTEND);
    }

    // ---- the flaws of a store whose business table carries the key, which the contract once missed -------

    @Test
    void expiryComputedFromTheClaimTimeFails() {
        assertFails(ExpiryFromTheClaim.class, "completionTimesAreWrittenAsGivenWhenTimePassesDuringTheWork", Promise.COMPLETION_TIMES);
        assertFails(ExpiryFromTheClaim.class, ExampleContract.class, Promise.COMPLETION_TIMES);
        assertFails(ExpiryFromTheClaim.class, SEQUENCES, Promise.EXPIRY);
    }

    @Test
    void purgeThatAlsoDeletesRecordsInProgressFails() {
        assertFails(PurgeInProgress.class, "purgeInEveryStateRemovesOnlyExpiredRecords", Promise.PURGE);
        assertFails(PurgeInProgress.class, ExampleContract.class, Promise.PURGE);
        assertFails(PurgeInProgress.class, SEQUENCES, Promise.PURGE);
    }

    @Test
    void scopeComparedWithoutCaseFails() {
        assertFails(ScopeCaseInsensitive.class, "keysAreExactAndCaseSensitive", Promise.EXACT_KEYS);
        assertFails(ScopeCaseInsensitive.class, ExampleContract.class, Promise.EXACT_KEYS);
        assertFails(ScopeCaseInsensitive.class, SEQUENCES, Promise.EXACT_KEYS);
        assertFails(ScopeCaseInsensitive.class, CHUNKS, Promise.CHUNK_OUTCOMES);
    }

    @Test
    void resultColumnSmallerThanThePolicysLimitFails() {
        assertFails(ResultColumnOf128KiB.class, "resultOfTheLargestSizeIsRecordedAndReplayedExactly", Promise.RESULT_SIZE);
        assertFails(ResultColumnOf128KiB.class, ExampleContract.class, Promise.RESULT_SIZE);
        assertFails(ResultColumnOf128KiB.class, SEQUENCES, Promise.RESULT_SIZE);
    }

    @Test
    void keyIdColumnShorterThanThePolicysLimitFails() {
        assertFails(IdColumnOf64Characters.class, "keysOfTheLargestSizeAndEveryCharacterAreKeptApart", Promise.KEY_LIMITS);
        assertFails(IdColumnOf64Characters.class, ExampleContract.class, Promise.KEY_LIMITS);
        assertFails(IdColumnOf64Characters.class, SEQUENCES, Promise.KEY_LIMITS);
    }

    @Test
    void wholeSecondTimestampsFailAnExample() {
        assertFails(WholeSecondTimestamps.class, "completionTimesAreWrittenAsGivenWhenTimePassesDuringTheWork", Promise.COMPLETION_TIMES);
    }

    @Test
    void nestedCallAnsweredWithTheAskersFingerprintFailsTheSequences() {
        assertFails(InProgressFingerprintIgnored.class, SEQUENCES, Promise.MISMATCH_IN_PROGRESS);
    }

    @Test
    void expiryWrittenAsTheLeasesEndFails() {
        assertFails(ExpiryAtTheLeasesEnd.class, "purgeInEveryStateRemovesOnlyExpiredRecords", Promise.PURGE);
        assertFails(ExpiryAtTheLeasesEnd.class, LEASE_SEQUENCES, Promise.PURGE, Promise.LEASE_TAKE_OVER);
        // A round whose keys start with a live lease and an expiring result purges while attempts hold claims: the
        // purge removes the lease, or, if an attempt took the lease over first, that attempt ran the work.
        assertFails(ExpiryAtTheLeasesEnd.class, CONCURRENCY, Promise.PURGE, Promise.AT_MOST_ONCE);
    }

    @Test
    void schemaLimitsTheStoreDeclaresAreTheOnesChecked() {
        Run run = run(testsOf(ResultColumnOf128KiBDeclared.class, ExampleContract.class));
        assertThat(run.messages).as("a store that declares its 128 KiB result column and 64-character id column").isEmpty();
        run = run(List.of(selectMethod(ResultColumnOf128KiBDeclared.class, SEQUENCES)));
        assertThat(run.messages).as("the sequences of a store that declares its limits").isEmpty();
    }

    @Test
    void aLargeResultIsNoLargerThanTheLimitTheStoreDeclares() {
        Run run = run(List.of(selectMethod(BlobColumnDeclared.class, "everyResultTypeIsRecordedAndReplayedExactly"),
                selectMethod(BlobColumnDeclared.class, SEQUENCES)));
        assertThat(run.summary.getTestsSucceededCount()).as("the results example and the sequences run").isEqualTo(2);
        assertThat(run.messages).as("a store that declares its 64 KiB result column, below the kit's large result").isEmpty();
    }

    @Test
    void anExamplesMessageStartsWithThePromiseAndOneFormatOfDurationsIsUsed() {
        Run run = run(selectMethod(ScopeCaseInsensitive.class, "keysAreExactAndCaseSensitive"));
        assertThat(run.messages).singleElement().asString().startsWith("keysAreExactAndCaseSensitive(): " + Promise.EXACT_KEYS.tag() + ":")
                .contains("Expected EXECUTED(v-EXACT/order-7), got REPLAYED(v-exact/order-7)");
        Run chunks = run(selectMethod(ChunkExpiryIgnored.class, CHUNKS));
        assertThat(chunks.messages).singleElement().asString().doesNotContain("PT").containsPattern("advance the clock by \\d+[hms]");
    }

    @Test
    void shrunkConcurrencyRoundNamesTheFewestThreads() {
        Run run = run(selectMethod(ExpiredTakeOverUnchecked.class, CONCURRENCY));
        assertThat(run.messages).hasSize(1);
        // Shrinking reruns rounds whose scheduling varies: it reaches 2 threads in most runs, but may stop at 3.
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("the fewest threads found that still fail: (\\d+), from a round of (\\d+)")
                .matcher(run.messages.get(0));
        assertThat(run.messages.get(0)).contains("starts with a result \"old\"");
        assertThat(m.find()).as("the report names the fewest threads: %s", run.messages.get(0)).isTrue();
        assertThat(Integer.parseInt(m.group(1))).isBetween(2, Integer.parseInt(m.group(2)));
    }

    @Test
    void shrunkSequenceIsReportedOneStepPerLine() {
        Run run = run(selectMethod(ExpiryIgnored.class, SEQUENCES));
        assertThat(run.messages).hasSize(1);
        String report = run.messages.get(0);
        assertThat(report).contains(Promise.EXPIRY.tag()).containsPattern("(?m)^\\s+1\\. execute key ")
                .containsPattern("(?m)^\\s+\\d+\\. advance the clock ").contains("the shortest failing sequence found");
    }

    // ---- stores that override the chunk methods, claimAll and completeAll, wrongly ---------------------

    @Test
    void chunkClaimsAnsweredOutOfRequestOrderFail() {
        assertFails(ChunkClaimsOutOfOrder.class, ChunkContract.class, Promise.CHUNK_OUTCOMES);
        assertFails(ChunkClaimsOutOfOrder.class, "chunkMixingRecordedNewExpiredAndMismatchingKeysGivesEachItsOwnOutcome",
                Promise.CHUNK_OUTCOMES);
        assertFails(ChunkClaimsOutOfOrder.class, CHUNKS, Promise.CHUNK_OUTCOMES);
    }

    @Test
    void chunkCompletionThatSkipsTheLastItemFails() {
        assertFails(ChunkSkipsLastCompletion.class, ChunkContract.class, Promise.CHUNK_ONCE);
        assertFails(ChunkSkipsLastCompletion.class, "finalFailureOfOneItemInAChunkIsRecordedForThatItemAlone", Promise.CHUNK_FINAL_FAILURE);
        assertFails(ChunkSkipsLastCompletion.class, CHUNKS, Promise.CHUNK_OUTCOMES);
    }

    @Test
    void chunkClaimThatTakesAnExpiredRecordForLiveFails() {
        assertFails(ChunkExpiryIgnored.class, ChunkContract.class, Promise.CHUNK_OUTCOMES);
        assertFails(ChunkExpiryIgnored.class, CHUNKS, Promise.CHUNK_OUTCOMES);
    }

    // ---- running a contract ------------------------------------------------------------------------

    private record Run(TestExecutionSummary summary, List<String> messages) {
    }

    /**
     * The seed of the broken contracts' random properties, unless one is given with
     * {@code -Didempotency.testkit.seed}: a random property finds a broken store with most seeds, not
     * with all (at quick effort the lease property missed {@link MismatchTakenOver} with 1 seed in
     * 300), and a proof that the contract catches a bug must not depend on the draw. The mutation
     * runs fix the same seed.
     */
    private static final String SEED = "20250101";

    /** The tests that {@code part} declares, run on {@code contract}. */
    static List<DiscoverySelector> testsOf(Class<?> contract, Class<?> part) {
        List<DiscoverySelector> tests = new ArrayList<>();
        for (java.lang.reflect.Method m : part.getDeclaredMethods()) {
            if (m.isAnnotationPresent(Test.class)) {
                tests.add(selectMethod(contract, m.getName()));
            }
        }
        return tests;
    }

    private static Run run(DiscoverySelector selector) {
        return run(List.of(selector));
    }

    private static Run run(List<DiscoverySelector> selectors) {
        boolean seedGiven = System.getProperty(IdempotencyStoreContract.SEED_PROPERTY) != null;
        if (!seedGiven) {
            System.setProperty(IdempotencyStoreContract.SEED_PROPERTY, SEED);
        }
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        try {
            LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request().selectors(selectors).build(), listener);
        } finally {
            if (!seedGiven) {
                System.clearProperty(IdempotencyStoreContract.SEED_PROPERTY);
            }
        }
        List<String> messages = new ArrayList<>();
        for (TestExecutionSummary.Failure f : listener.getSummary().getFailures()) {
            StringBuilder m = new StringBuilder(f.getTestIdentifier().getDisplayName()).append(": ");
            for (Throwable t = f.getException(); t != null; t = t.getCause()) {
                m.append(t.getMessage()).append('\n');
            }
            messages.add(m.toString());
        }
        return new Run(listener.getSummary(), messages);
    }

    /** The broken store fails the one test {@code method}, naming {@code expected} if not {@code null}. */
    private static void assertFails(Class<?> contract, String method, Promise expected) {
        assertFails(contract, "." + method, List.of(selectMethod(contract, method)), expected);
    }

    /** The broken store fails the one test {@code method}, naming one of {@code expected}. */
    private static void assertFails(Class<?> contract, String method, Promise expected, Promise orElse) {
        Run run = run(selectMethod(contract, method));
        assertThat(run.messages).as(contract.getSimpleName() + "." + method + " must fail naming " + expected.tag() + " or "
                + orElse.tag()).anySatisfy(m -> assertThat(m).containsAnyOf(expected.tag(), orElse.tag()));
    }

    /** The broken store fails the tests of {@code part} alone, one of them naming {@code expected}. */
    private static void assertFails(Class<?> contract, Class<?> part, Promise expected) {
        assertFails(contract, " (" + part.getSimpleName() + " alone)", testsOf(contract, part), expected);
    }

    private static void assertFails(Class<?> contract, String what, List<DiscoverySelector> selectors, Promise expected) {
        Run run = run(selectors);
        assertThat(run.summary.getTestsFoundCount()).as("tests found in " + contract.getSimpleName() + what).isPositive();
        assertThat(run.messages).as(contract.getSimpleName() + what + " must fail the contract").isNotEmpty();
        assertThat(run.messages).as("every message starts with the promise, not the assertion's bracket")
                .noneMatch(m -> m.contains("): [Contract") || m.contains("): [KIT"));
        if (expected != null) {
            assertThat(run.messages).as(contract.getSimpleName() + " must fail naming " + expected.tag())
                    .anySatisfy(m -> assertThat(m).contains(expected.tag()));
        }
    }

    // ---- the broken stores -------------------------------------------------------------------------

    /** Contract on the reference store, its leases on the kit's clock, wrapped by one broken variant. */
    abstract static class OnInMemory extends IdempotencyStoreContract<InMemoryIdempotencyStore.Transaction> {
        InMemoryIdempotencyStore inner;

        abstract IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken();

        @Override
        protected IdempotencyStore<InMemoryIdempotencyStore.Transaction> createStore(InstantSource clock) {
            inner = new InMemoryIdempotencyStore(clock);
            return broken();
        }

        @Override
        protected TransactionRunner<InMemoryIdempotencyStore.Transaction> transactions() {
            return inner.transactions();
        }

        @Override
        protected InMemoryIdempotencyStore.Transaction begin() {
            return inner.begin();
        }

        @Override
        protected void commit(InMemoryIdempotencyStore.Transaction tx) {
            inner.commit(tx);
        }

        @Override
        protected void rollback(InMemoryIdempotencyStore.Transaction tx) {
            inner.rollback(tx);
        }

        @Override
        protected List<UnusableTransaction<InMemoryIdempotencyStore.Transaction>> unusableTransactions() {
            InMemoryIdempotencyStore other = new InMemoryIdempotencyStore();
            InMemoryIdempotencyStore.Transaction foreign = other.begin();
            return List.of(new UnusableTransaction<>("a transaction of another store", foreign, () -> other.rollback(foreign)));
        }
    }

    /** Contract on a {@link FlawedStore}. */
    abstract static class OnFlawed extends IdempotencyStoreContract<FlawedStore.Tx> {
        final FlawedStore store;

        OnFlawed(FlawedStore.Flaw flaw) {
            this.store = new FlawedStore(flaw);
        }

        @Override
        protected IdempotencyStore<FlawedStore.Tx> createStore(InstantSource clock) {
            return store;
        }

        @Override
        protected FlawedStore.Tx begin() {
            return store.begin();
        }

        @Override
        protected void commit(FlawedStore.Tx tx) {
            store.commit(tx);
        }

        @Override
        protected void rollback(FlawedStore.Tx tx) {
            store.rollback(tx);
        }

        @Override
        protected List<UnusableTransaction<FlawedStore.Tx>> unusableTransactions() {
            return List.of(new UnusableTransaction<>("a transaction in auto-commit mode", store.beginAutoCommit(), null));
        }
    }

    /** Accepts a transaction in auto-commit mode: its claim is committed at once, before the work runs. */
    static class AutoCommitAccepted extends OnFlawed {
        AutoCommitAccepted() {
            super(FlawedStore.Flaw.AUTO_COMMIT_ACCEPTED);
        }
    }

    static class CheckThenInsert extends OnFlawed {
        CheckThenInsert() {
            super(FlawedStore.Flaw.CHECK_THEN_INSERT);
        }
    }

    static class DirtyReads extends OnFlawed {
        DirtyReads() {
            super(FlawedStore.Flaw.DIRTY_READS);
        }
    }

    static class CompletionOutsideTransaction extends OnFlawed {
        CompletionOutsideTransaction() {
            super(FlawedStore.Flaw.COMPLETION_OUTSIDE_TRANSACTION);
        }
    }

    /** Stores the fingerprint of whoever asks, so that every retry looks like the same request. */
    static class WrongFingerprint extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new ForwardingStore(inner) {
                @Override
                public Claim claim(InMemoryIdempotencyStore.Transaction tx, ClaimRequest r) {
                    return withAskersFingerprint(inner.claim(tx, r), r, record -> true);
                }
            };
        }
    }

    /** Answers "written" to a write-last that found the key recorded: the duplicate's transaction would commit. */
    static class WriteLastIgnoresRecord extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new ForwardingStore(inner) {
                @Override
                public Claim writeLast(InMemoryIdempotencyStore.Transaction tx, ClaimRequest r, Completion done) {
                    Claim claim = super.writeLast(tx, r, done);
                    return claim instanceof Claim.Existing ? Claim.acquired() : claim;
                }
            };
        }
    }

    /**
     * Fails a whole chunk when one of its keys is held past the lock timeout, as a PostgreSQL store
     * does whose timed-out statement aborted the transaction before the chunk's next claim.
     */
    static class BusyKeyFailsTheChunk extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new ForwardingStore(inner) {
                @Override
                public List<Claim> claimAll(InMemoryIdempotencyStore.Transaction tx, List<ClaimRequest> requests) {
                    List<Claim> claims = super.claimAll(tx, requests);
                    if (claims.stream().anyMatch(c -> c instanceof Claim.Busy)) {
                        throw new dev.idempotency.IdempotencyStoreException(requests.get(0).key(),
                                "current transaction is aborted, commands ignored until end of transaction block", null);
                    }
                    return claims;
                }
            };
        }
    }

    /** Treats every record as live, however old. */
    static class ExpiryIgnored extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new ForwardingStore(inner) {
                @Override
                public Claim claim(InMemoryIdempotencyStore.Transaction tx, ClaimRequest r) {
                    return inner.claim(tx, new ClaimRequest(r.key(), r.fingerprint(), Instant.EPOCH, r.expiresAt(), r.lockTimeout()));
                }
            };
        }
    }

    /**
     * Claims a chunk as a store that inserts the new keys and then reads the rest might: it answers
     * the keys it claimed first, then the records it found, instead of one claim per request in the
     * request's order.
     */
    static class ChunkClaimsOutOfOrder extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new ForwardingStore(inner) {
                @Override
                public List<Claim> claimAll(InMemoryIdempotencyStore.Transaction tx, List<ClaimRequest> requests) {
                    List<Claim> acquiredFirst = new ArrayList<>();
                    List<Claim> found = new ArrayList<>();
                    for (ClaimRequest r : requests) {
                        Claim c = inner.claim(tx, r);
                        (c instanceof Claim.Acquired ? acquiredFirst : found).add(c);
                    }
                    acquiredFirst.addAll(found);
                    return acquiredFirst;
                }
            };
        }
    }

    /** Records a chunk's results with an off-by-one: the last completion is never written. */
    static class ChunkSkipsLastCompletion extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new ForwardingStore(inner) {
                @Override
                public void completeAll(InMemoryIdempotencyStore.Transaction tx, List<Completion> completions) {
                    for (int i = 0; i < completions.size() - 1; i++) {
                        inner.complete(tx, completions.get(i));
                    }
                }
            };
        }
    }

    /** Claims a chunk treating every record as live, however old; a single claim judges expiry right. */
    static class ChunkExpiryIgnored extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new ForwardingStore(inner) {
                @Override
                public List<Claim> claimAll(InMemoryIdempotencyStore.Transaction tx, List<ClaimRequest> requests) {
                    List<Claim> claims = new ArrayList<>();
                    for (ClaimRequest r : requests) {
                        claims.add(inner.claim(tx, new ClaimRequest(r.key(), r.fingerprint(), Instant.EPOCH, r.expiresAt(), r.lockTimeout())));
                    }
                    return claims;
                }
            };
        }
    }

    /** Keys records by id alone. */
    static class ScopeIgnored extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new Renaming(inner, k -> IdempotencyKey.of("shared", k.id()));
        }
    }

    /** Compares ids without case, as a case-insensitive collation would. */
    static class CaseInsensitive extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new Renaming(inner, k -> IdempotencyKey.of(k.scope(), k.id().toLowerCase(Locale.ROOT)));
        }
    }

    /** Purges records an hour before they expire. */
    static class PurgeUnexpired extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new ForwardingStore(inner) {
                @Override
                public int purgeExpired(InMemoryIdempotencyStore.Transaction tx, Instant now, int limit) {
                    return inner.purgeExpired(tx, now.plus(RETENTION), limit);
                }
            };
        }
    }

    /** Takes a savepoint that undoes nothing. */
    static class NoSavepoint extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new ForwardingStore(inner) {
                @Override
                public TxSavepoint savepoint(InMemoryIdempotencyStore.Transaction tx) {
                    return new TxSavepoint() {
                        @Override
                        public void rollback() {
                        }

                        @Override
                        public void release() {
                        }
                    };
                }
            };
        }
    }

    /**
     * Reads the key's record without a lock (as a plain SELECT does), and if it has expired, takes it
     * over with a write that waits for the key's lock but does not check the expiry again: an
     * {@code UPDATE ... WHERE key = ?} without {@code AND expires_at <= now}. Two attempts that meet
     * the expired record together both take it over, one after the other, and both run the work.
     */
    static class ExpiredTakeOverUnchecked extends OnInMemory {
        /**
         * A round trip's length: long enough that attempts started together meet the expired record
         * together on a loaded machine too (a bare {@code Thread.yield()} let a whole quick run of
         * the concurrency property pass when four builds shared two cores).
         */
        private static void pause() {
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /**
         * More concurrency rounds than the quick setting's: only the rounds that start on an expired
         * record can meet the flaw, and a quick run met none of them in one build out of five while
         * four builds shared two cores.
         */
        @Override
        protected Effort effort() {
            Effort quick = Effort.fromSystemProperty();
            return new Effort(quick.sequences(), Math.max(quick.concurrentRounds(), 8 * Effort.QUICK_ROUNDS), quick.leaseSequences());
        }

        /** The expiry of each key's committed record, as a read without a lock sees it. */
        private final Map<IdempotencyKey, Instant> committedExpiry = new ConcurrentHashMap<>();
        private final Map<InMemoryIdempotencyStore.Transaction, Map<IdempotencyKey, Optional<Instant>>> written = new ConcurrentHashMap<>();

        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new ForwardingStore(inner) {
                @Override
                public Claim claim(InMemoryIdempotencyStore.Transaction tx, ClaimRequest r) {
                    Instant read = committedExpiry.get(r.key());
                    pause(); // the round trip between the read and the write
                    Claim c = inner.claim(tx, r);
                    if (c instanceof Claim.Existing e && read != null && !read.isAfter(r.now())) {
                        // It was expired when read: overwrite whatever is there now.
                        return inner.claim(tx, new ClaimRequest(r.key(), r.fingerprint(), e.record().expiresAt(), r.expiresAt(), r.lockTimeout()));
                    }
                    return c;
                }

                @Override
                public void complete(InMemoryIdempotencyStore.Transaction tx, Completion c) {
                    inner.complete(tx, c);
                    written.computeIfAbsent(tx, t -> new ConcurrentHashMap<>()).put(c.key(), Optional.of(c.expiresAt()));
                }

                @Override
                public int purgeExpired(InMemoryIdempotencyStore.Transaction tx, Instant now, int limit) {
                    int removed = inner.purgeExpired(tx, now, limit);
                    committedExpiry.forEach((key, expiry) -> {
                        if (!expiry.isAfter(now)) {
                            written.computeIfAbsent(tx, t -> new ConcurrentHashMap<>()).put(key, Optional.empty());
                        }
                    });
                    return removed;
                }
            };
        }

        @Override
        protected void commit(InMemoryIdempotencyStore.Transaction tx) {
            super.commit(tx);
            Map<IdempotencyKey, Optional<Instant>> w = written.remove(tx);
            if (w != null) {
                w.forEach((key, expiry) -> {
                    if (expiry.isPresent()) {
                        committedExpiry.put(key, expiry.get());
                    } else {
                        committedExpiry.remove(key);
                    }
                });
            }
        }

        @Override
        protected void rollback(InMemoryIdempotencyStore.Transaction tx) {
            super.rollback(tx);
            written.remove(tx);
        }
    }

    /** Records a null result without completing the record: it stays in progress, and every retry gets InProgress. */
    static class NullResultLeftInProgress extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new ForwardingStore(inner) {
                @Override
                public void complete(InMemoryIdempotencyStore.Transaction tx, Completion c) {
                    if (c.result() != null) {
                        inner.complete(tx, c);
                    }
                }
            };
        }
    }

    /** Purges records that expire up to 19 minutes from now. */
    static class PurgeNineteenMinutesAhead extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new ForwardingStore(inner) {
                @Override
                public int purgeExpired(InMemoryIdempotencyStore.Transaction tx, Instant now, int limit) {
                    return inner.purgeExpired(tx, now.plus(Duration.ofMinutes(19)), limit);
                }
            };
        }
    }

    /** Answers a record in progress with the asker's fingerprint: another request's nested call gets InProgress, not Mismatch. */
    static class InProgressFingerprintIgnored extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new ForwardingStore(inner) {
                @Override
                public Claim claim(InMemoryIdempotencyStore.Transaction tx, ClaimRequest r) {
                    return withAskersFingerprint(inner.claim(tx, r), r, record -> record.status() == RecordStatus.IN_PROGRESS);
                }
            };
        }
    }

    /** Ignores the request's lock timeout and waits for the database's own: 10 seconds. */
    static class LockTimeoutIgnored extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new ForwardingStore(inner) {
                @Override
                public Claim claim(InMemoryIdempotencyStore.Transaction tx, ClaimRequest r) {
                    return inner.claim(tx, new ClaimRequest(r.key(), r.fingerprint(), r.now(), r.expiresAt(), Duration.ofSeconds(10)));
                }
            };
        }
    }

    /**
     * Completes as {@code docs/writing-a-store.md} once invited to: writes the status and the result,
     * and keeps the claim's expiry, which is the claim time plus the retention. A record whose work
     * took a while expires early.
     */
    static class ExpiryFromTheClaim extends OnInMemory {
        private final Map<InMemoryIdempotencyStore.Transaction, Map<IdempotencyKey, Instant>> claimed = new ConcurrentHashMap<>();

        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new ForwardingStore(inner) {
                @Override
                public Claim claim(InMemoryIdempotencyStore.Transaction tx, ClaimRequest r) {
                    Claim c = inner.claim(tx, r);
                    if (c instanceof Claim.Acquired) {
                        claimed.computeIfAbsent(tx, t -> new ConcurrentHashMap<>()).put(r.key(), r.expiresAt());
                    }
                    return c;
                }

                @Override
                public void complete(InMemoryIdempotencyStore.Transaction tx, Completion c) {
                    Instant fromClaim = claimed.getOrDefault(tx, Map.of()).getOrDefault(c.key(), c.expiresAt());
                    inner.complete(tx, new Completion(c.key(), c.status(), c.codec(), c.result(), c.completedAt(), fromClaim));
                }
            };
        }
    }

    /** Keeps a completion's times in whole seconds ({@code TIMESTAMP(0)}), cut down: a record expires up to a second early. */
    static class WholeSecondTimestamps extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            java.util.function.UnaryOperator<Instant> seconds = t -> t.truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
            return new ForwardingStore(inner) {
                @Override
                public void complete(InMemoryIdempotencyStore.Transaction tx, Completion c) {
                    inner.complete(tx, new Completion(c.key(), c.status(), c.codec(), c.result(), seconds.apply(c.completedAt()),
                            seconds.apply(c.expiresAt())));
                }
            };
        }
    }

    /**
     * Writes a lease claim's expiry as the lease's end ({@code expires_at = lease_until}): once the
     * lease ends, the record in progress counts as expired, and a purge removes it.
     */
    static class ExpiryAtTheLeasesEnd extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new ForwardingLeasingStore(inner) {
                @Override
                public LeaseClaim claimLease(InMemoryIdempotencyStore.Transaction tx, LeaseRequest r) {
                    return super.claimLease(tx, new LeaseRequest(r.key(), r.fingerprint(), r.ownerToken(), r.lease(), r.lease(),
                            r.lockTimeout()));
                }
            };
        }
    }

    /**
     * Fences an extend by the lease's end as well as by the token ({@code WHERE owner = ? AND lease_until > now}): the
     * holder cannot renew a lease that ended, although nobody took the record over.
     */
    static class ExtendOnlyWhileLive extends OnInMemory {
        private final Map<IdempotencyKey, Instant> leaseEnds = new ConcurrentHashMap<>();

        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new ForwardingLeasingStore(inner) {
                @Override
                public LeaseClaim claimLease(InMemoryIdempotencyStore.Transaction tx, LeaseRequest r) {
                    LeaseClaim claim = super.claimLease(tx, r);
                    if (claim instanceof LeaseClaim.Acquired a) {
                        leaseEnds.put(r.key(), a.leaseUntil());
                    }
                    return claim;
                }

                @Override
                public Optional<Instant> extendLease(InMemoryIdempotencyStore.Transaction tx, IdempotencyKey key, String ownerToken,
                                                     Duration lease) {
                    Instant end = leaseEnds.get(key);
                    if (end != null && !end.isAfter(clock().instant())) {
                        return Optional.empty();
                    }
                    Optional<Instant> extended = super.extendLease(tx, key, ownerToken, lease);
                    extended.ifPresent(e -> leaseEnds.put(key, e));
                    return extended;
                }
            };
        }
    }

    /** Purges with {@code WHERE created_at <= now - retention}: a record completed late goes before its expiry. */
    static class PurgeByCreationTime extends OnFlawed {
        PurgeByCreationTime() {
            super(FlawedStore.Flaw.PURGE_BY_CREATION_TIME);
        }
    }

    /**
     * Claims the keys of a chunk with an even number of keys from the last to the first (as a store
     * whose index scan runs one way or the other might), the others in the engine's order, and
     * answers in the request's order: two overlapping chunks of different parity lock in opposite
     * orders.
     */
    static class ChunkLockOrderDiffers extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new ForwardingStore(inner) {
                @Override
                public List<Claim> claimAll(InMemoryIdempotencyStore.Transaction tx, List<ClaimRequest> requests) {
                    if (requests.size() % 2 != 0) {
                        return super.claimAll(tx, requests);
                    }
                    Claim[] claims = new Claim[requests.size()];
                    for (int i = requests.size() - 1; i >= 0; i--) {
                        claims[i] = inner.claim(tx, requests.get(i));
                    }
                    return List.of(claims);
                }
            };
        }
    }

    /** Purges with {@code WHERE expires_at <= ? OR status = 'IN_PROGRESS'}: every record in progress it can see goes too. */
    static class PurgeInProgress extends OnFlawed {
        PurgeInProgress() {
            super(FlawedStore.Flaw.PURGE_IN_PROGRESS);
        }
    }

    /** Compares scopes without case (a case-insensitive collation on the scope column only); ids exactly. */
    static class ScopeCaseInsensitive extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new Renaming(inner, k -> IdempotencyKey.of(k.scope().toLowerCase(Locale.ROOT), k.id()));
        }
    }

    /** A result column of 128 KiB ({@code VARBINARY(131072)}) while the policy allows 1 MiB: a larger result fails the insert. */
    static class ResultColumnOf128KiB extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new SmallColumns(inner, Integer.MAX_VALUE, 131_072);
        }
    }

    /** A key id column of 64 characters ({@code VARCHAR(64)}) while the policy allows 255: a longer id fails the insert. */
    static class IdColumnOf64Characters extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new SmallColumns(inner, 64, Integer.MAX_VALUE);
        }
    }

    /** The same small columns, declared to the kit: the contract checks the store's own limits, and passes. */
    static class ResultColumnOf128KiBDeclared extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new SmallColumns(inner, 64, 131_072);
        }

        @Override
        protected StoreLimits limits() {
            return new StoreLimits(64, 64, 131_072);
        }
    }

    /** A result column of 64 KiB less a byte (MySQL's {@code BLOB}), declared to the kit: smaller than the kit's large result. */
    static class BlobColumnDeclared extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new SmallColumns(inner, Integer.MAX_VALUE, 65_535);
        }

        @Override
        protected StoreLimits limits() {
            return new StoreLimits(64, 255, 65_535);
        }
    }

    /** Refuses, as a database does, a key id or a result larger than its columns. */
    static final class SmallColumns extends ForwardingStore {
        private final int idColumn;
        private final int resultColumn;

        SmallColumns(InMemoryIdempotencyStore inner, int idColumn, int resultColumn) {
            super(inner);
            this.idColumn = idColumn;
            this.resultColumn = resultColumn;
        }

        @Override
        public Claim claim(InMemoryIdempotencyStore.Transaction tx, ClaimRequest r) {
            if (r.key().id().length() > idColumn) {
                throw new dev.idempotency.IdempotencyStoreException(r.key(), "value too long for column key_id VARCHAR(" + idColumn + ")",
                        null);
            }
            return super.claim(tx, r);
        }

        @Override
        public void complete(InMemoryIdempotencyStore.Transaction tx, Completion c) {
            if (c.result() != null && c.result().length > resultColumn) {
                throw new dev.idempotency.IdempotencyStoreException(c.key(), "value too long for column result VARBINARY(" + resultColumn
                        + ")", null);
            }
            super.complete(tx, c);
        }
    }

    /** The reference store seen through the transactional-mode SPI only: nothing broken, no leases. */
    static class WithoutLeases extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new ForwardingStore(inner);
        }
    }

    /** The reference store without its leases, under the two lease parts only: a test class that chose them wrongly. */
    static class LeasePartsWithoutLeases extends StoreFixture<InMemoryIdempotencyStore.Transaction>
            implements LeasePrimitiveContract<InMemoryIdempotencyStore.Transaction>, LeasedCallContract<InMemoryIdempotencyStore.Transaction> {
        @Override
        protected IdempotencyStore<InMemoryIdempotencyStore.Transaction> createStore(InstantSource clock) {
            return new ForwardingStore(new InMemoryIdempotencyStore(clock));
        }

        /** Not called: the test asks the fixture for the leasing store only. */
        @Override
        protected InMemoryIdempotencyStore.Transaction begin() {
            throw new UnsupportedOperationException("no transaction is needed");
        }

        @Override
        protected void commit(InMemoryIdempotencyStore.Transaction tx) {
            begin();
        }

        @Override
        protected void rollback(InMemoryIdempotencyStore.Transaction tx) {
            commit(tx);
        }
    }

    /** Completes with the holder's token whoever asks: a stale attempt's result overwrites the holder's claim. */
    static class NoFencing extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new ForwardingLeasingStore(inner) {
                @Override
                public Optional<Instant> completeLeased(InMemoryIdempotencyStore.Transaction tx, String token, LeasedCompletion c) {
                    return inner.completeLeased(tx, owners.getOrDefault(c.key(), token), c);
                }
            };
        }
    }

    /** The lease tier on the reference store seen without transactions, its withdrawal broken. */
    abstract static class OnLeaseOnly extends LeaseOnlyStoreFixture implements LeasePrimitiveContract<NoTransaction> {
        final InMemoryIdempotencyStore inner = new InMemoryIdempotencyStore(clock());

        /** The variant's withdrawal, given the reference store's lease primitives; a variant may override createStore instead. */
        boolean withdrawal(LeaseOnlyStore store, IdempotencyKey key, String ownerToken) {
            throw new UnsupportedOperationException();
        }

        @Override
        protected IdempotencyStore<NoTransaction> createStore(InstantSource clock) {
            return new LeaseOnlyInMemoryStore(inner) {
                @Override
                public boolean withdrawClaim(NoTransaction tx, IdempotencyKey key, String ownerToken) {
                    return withdrawal(this, key, ownerToken);
                }
            };
        }
    }

    /** Not broken: keeps {@link LeaseOnlyStore#withdrawClaim}'s default, which only ends the lease and says so. */
    static class DefaultWithdrawal extends OnLeaseOnly {
        @Override
        boolean withdrawal(LeaseOnlyStore store, IdempotencyKey key, String ownerToken) {
            store.releaseLease(NoTransaction.NONE, key, ownerToken); // what the default does
            return false;
        }
    }

    /** Withdraws the claim of whoever holds the key, whatever token asks: a stale attempt deletes the new holder's record. */
    static class WithdrawUnfenced extends OnLeaseOnly {
        @Override
        protected IdempotencyStore<NoTransaction> createStore(InstantSource clock) {
            Map<IdempotencyKey, String> owners = new ConcurrentHashMap<>();
            return new LeaseOnlyInMemoryStore(inner) {
                @Override
                public LeaseClaim claimLease(NoTransaction tx, LeaseRequest request) {
                    LeaseClaim claim = super.claimLease(tx, request);
                    if (claim instanceof LeaseClaim.Acquired) {
                        owners.put(request.key(), request.ownerToken());
                    }
                    return claim;
                }

                @Override
                public boolean withdrawClaim(NoTransaction tx, IdempotencyKey key, String ownerToken) {
                    return super.withdrawClaim(tx, key, owners.getOrDefault(key, ownerToken));
                }
            };
        }
    }

    /** Answers that the record was deleted, but only ends the lease: the key stays in progress, refusing another fingerprint. */
    static class WithdrawKeepsRecord extends OnLeaseOnly {
        @Override
        boolean withdrawal(LeaseOnlyStore store, IdempotencyKey key, String ownerToken) {
            return store.releaseLease(NoTransaction.NONE, key, ownerToken);
        }
    }

    /** Lists the named operations from the first page again, whatever page is asked for. */
    static class PagesStartOver extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new ForwardingRecoveringStore(inner) {
                @Override
                public List<PendingOperation> pending(InMemoryIdempotencyStore.Transaction tx, IdempotencyKey after, int limit) {
                    return inner.pending(tx, null, limit);
                }
            };
        }
    }

    /** Enlists a key for the token of its latest claim, whatever token is given. */
    static class EnlistUnfenced extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new ForwardingRecoveringStore(inner) {
                @Override
                public boolean enlist(InMemoryIdempotencyStore.Transaction tx, IdempotencyKey key, String token, String operation) {
                    return inner.enlist(tx, key, owners.getOrDefault(key, token), operation);
                }
            };
        }
    }

    /** Never removes a named operation's entry. */
    static class DelistIgnored extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new ForwardingRecoveringStore(inner) {
                @Override
                public void delist(InMemoryIdempotencyStore.Transaction tx, IdempotencyKey key) {
                }
            };
        }
    }

    /** Takes over a record in progress whether or not its lease has ended. */
    static class LiveTakeOver extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new ForwardingLeasingStore(inner) {
                @Override
                public LeaseClaim claimLease(InMemoryIdempotencyStore.Transaction tx, LeaseRequest r) {
                    LeaseClaim claim = inner.claimLease(tx, r);
                    String owner = owners.get(r.key());
                    if (claim instanceof LeaseClaim.Held h && h.fingerprint().equals(r.fingerprint()) && owner != null) {
                        inner.releaseLease(tx, r.key(), owner);
                    }
                    return super.claimLease(tx, r);
                }
            };
        }
    }

    /** Takes over a record in progress of another fingerprint once its lease ended, as if the fingerprints were equal. */
    static class MismatchTakenOver extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new ClaimRewriting(inner, (store, tx, r, claim) -> claim instanceof LeaseClaim.Held h && !h.fingerprint().equals(r.fingerprint())
                    ? store.claimLease(tx, new LeaseRequest(r.key(), h.fingerprint(), r.ownerToken(), r.lease(), r.retention(), r.lockTimeout()))
                    : claim);
        }
    }

    /** A take-over does not hand the recovery point on: the next owner starts again from scratch. */
    static class TakeOverForgetsRecoveryPoint extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new ClaimRewriting(inner, (store, tx, r, claim) -> claim instanceof LeaseClaim.Acquired a && a.attempt() > 1
                    ? new LeaseClaim.Acquired(a.attempt(), a.now(), a.leaseUntil(), null) : claim);
        }
    }

    /** A release sets the recovery point back to the first one recorded for the key. */
    static class ReleaseRewindsRecoveryPoint extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            Map<IdempotencyKey, RecoveryPoint> first = new ConcurrentHashMap<>();
            return new ForwardingLeasingStore(inner) {
                @Override
                public boolean checkpoint(InMemoryIdempotencyStore.Transaction tx, IdempotencyKey key, String token, RecoveryPoint point) {
                    boolean recorded = inner.checkpoint(tx, key, token, point);
                    if (recorded) {
                        first.putIfAbsent(key, point);
                    }
                    return recorded;
                }

                @Override
                public boolean releaseLease(InMemoryIdempotencyStore.Transaction tx, IdempotencyKey key, String token) {
                    RecoveryPoint oldest = first.get(key);
                    if (oldest != null) {
                        inner.checkpoint(tx, key, token, oldest);
                    }
                    return inner.releaseLease(tx, key, token);
                }
            };
        }
    }

    /** Counts every claim, and every take-over, as attempt 1. */
    static class AttemptsNeverCount extends OnInMemory {
        @Override
        IdempotencyStore<InMemoryIdempotencyStore.Transaction> broken() {
            return new ClaimRewriting(inner, (store, tx, r, claim) -> claim instanceof LeaseClaim.Acquired a
                    ? new LeaseClaim.Acquired(1, a.now(), a.leaseUntil(), a.resumeFrom())
                    : claim instanceof LeaseClaim.Held h ? new LeaseClaim.Held(h.fingerprint(), h.leaseUntil(), 1, h.now()) : claim);
        }
    }

    /** The claim, with the record's fingerprint replaced by the asker's where {@code which} holds. */
    static Claim withAskersFingerprint(Claim c, ClaimRequest r, java.util.function.Predicate<StoredRecord> which) {
        if (c instanceof Claim.Existing e && which.test(e.record())) {
            StoredRecord s = e.record();
            return Claim.existing(new StoredRecord(s.key(), r.fingerprint(), s.status(), s.codec(), s.result(), s.createdAt(),
                    s.completedAt(), s.expiresAt()));
        }
        return c;
    }

    /** Changes what the reference store's claimLease answered; a rewrite that claims again goes through it once more. */
    static final class ClaimRewriting extends ForwardingLeasingStore {
        interface Rewrite {
            LeaseClaim apply(ForwardingLeasingStore store, InMemoryIdempotencyStore.Transaction tx, LeaseRequest request, LeaseClaim claim);
        }

        private final Rewrite rewrite;

        ClaimRewriting(InMemoryIdempotencyStore inner, Rewrite rewrite) {
            super(inner);
            this.rewrite = rewrite;
        }

        @Override
        public LeaseClaim claimLease(InMemoryIdempotencyStore.Transaction tx, LeaseRequest r) {
            return rewrite.apply(this, tx, r, super.claimLease(tx, r));
        }
    }

    /** Stores every key under another name. */
    static final class Renaming extends ForwardingStore {
        private final java.util.function.UnaryOperator<IdempotencyKey> rename;

        Renaming(InMemoryIdempotencyStore inner, java.util.function.UnaryOperator<IdempotencyKey> rename) {
            super(inner);
            this.rename = rename;
        }

        @Override
        public Claim claim(InMemoryIdempotencyStore.Transaction tx, ClaimRequest r) {
            Claim c = inner.claim(tx, new ClaimRequest(rename.apply(r.key()), r.fingerprint(), r.now(), r.expiresAt(), r.lockTimeout()));
            if (c instanceof Claim.Existing e) {
                StoredRecord s = e.record();
                return Claim.existing(new StoredRecord(r.key(), s.fingerprint(), s.status(), s.codec(), s.result(), s.createdAt(),
                        s.completedAt(), s.expiresAt()));
            }
            return c;
        }

        @Override
        public void complete(InMemoryIdempotencyStore.Transaction tx, Completion c) {
            inner.complete(tx, new Completion(rename.apply(c.key()), c.status(), c.codec(), c.result(), c.completedAt(), c.expiresAt()));
        }

        @Override
        public void release(InMemoryIdempotencyStore.Transaction tx, IdempotencyKey key) {
            inner.release(tx, rename.apply(key));
        }
    }
}
