package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.fake.FakeRunner;
import dev.idempotency.fake.FakeStore;
import dev.idempotency.fake.FakeTx;
import dev.idempotency.internal.FailureRecords;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.RecoveryPoint;
import dev.idempotency.spi.StoredRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ManagedIdempotencyTest {

    static final IdempotencyKey KEY = IdempotencyKey.of("jobs", "k1");
    static final RetryPolicy NO_PAUSE = RetryPolicy.builder().maxAttempts(3).backoff(Duration.ZERO, Duration.ZERO).build();

    final FakeStore store = new FakeStore();
    final FakeRunner runner = new FakeRunner(store);
    final List<String> events = new ArrayList<>();

    final IdempotencyListener listener = new IdempotencyListener() {
        @Override
        public void onOutcome(IdempotencyKey key, Outcome.Status status, Duration elapsed) {
            events.add("outcome " + status);
        }

        @Override
        public void onError(IdempotencyKey key, Throwable failure, Duration elapsed) {
            events.add("error " + failure.getClass().getSimpleName());
        }

        @Override
        public void onRetry(IdempotencyKey key, int attempt, Throwable failure, Duration backoff) {
            events.add("retry " + attempt + " " + backoff);
            throw new IllegalStateException("a failing listener is ignored");
        }
    };

    ManagedIdempotency<FakeTx> managed(KeyPolicy policy) {
        Idempotency<FakeTx> engine = Idempotency.builder(store).keyPolicy(policy).listener(listener).build();
        return ManagedIdempotency.builder(engine, runner).retryPolicy(NO_PAUSE).build();
    }

    ManagedIdempotency<FakeTx> managed() {
        return managed(KeyPolicy.ofDefaults());
    }

    /** Lease mode over the managed engine's store, sharing its settings. */
    LeasedIdempotency<FakeTx> leased(KeyPolicy policy) {
        return LeasedIdempotency.of(managed(policy), store);
    }

    LeasedIdempotency<FakeTx> leased() {
        return leased(KeyPolicy.ofDefaults());
    }

    static TransactionConflictException conflict() {
        return new TransactionConflictException(KEY, new RuntimeException("serialization failure"));
    }

    @Test
    void executeRetriesAConflictAtCommitAndCommitsTheWorkOnce() {
        runner.commitFailures.add(conflict());
        runner.commitFailures.add(conflict());
        AtomicInteger runs = new AtomicInteger();
        Outcome<String> outcome = managed().execute(KEY, tx -> {
            tx.write("w" + runs.incrementAndGet());
            return "r";
        });
        assertThat(outcome).isEqualTo(new Outcome.Executed<>(KEY, "r"));
        assertThat(runs).hasValue(3);
        assertThat(store.committedWrites()).containsExactly("w3");
        assertThat(events).containsSubsequence("retry 1 PT0S", "retry 2 PT0S");
        assertThat(managed().execute(IdempotentCall.of(KEY, ResultCodec.string()), tx -> "again"))
                .isInstanceOf(Outcome.Replayed.class).extracting(Outcome::value).isEqualTo("r");
    }

    @Test
    void theLastAttemptsConflictReachesTheCaller() {
        for (int i = 0; i < 3; i++) {
            runner.commitFailures.add(conflict());
        }
        assertThatThrownBy(() -> managed().execute(KEY, tx -> "r")).isInstanceOf(TransactionConflictException.class);
        assertThat(runner.transactions).isEqualTo(3);
        assertThat(events).filteredOn(e -> e.startsWith("retry")).hasSize(2);
    }

    @Test
    void aFailureThatIsNotAConflictIsNotRetried() {
        IllegalStateException boom = new IllegalStateException("boom");
        assertThatThrownBy(() -> managed().execute(KEY, tx -> {
            throw boom;
        })).isSameAs(boom);
        assertThat(runner.transactions).isEqualTo(1);
        assertThat(store.committed(KEY)).isEmpty();
    }

    @Test
    void aBusyKeyIsInProgressAndItsTransactionRolledBack() {
        store.busy.add(KEY);
        assertThat(managed().execute(KEY, tx -> {
            tx.write("w");
            return "r";
        })).isEqualTo(new Outcome.InProgress<>(KEY));
        assertThat(runner.commits).isZero();
    }

    @Test
    void leaseRunsTheCallOnceAndReplaysItsResult() {
        AtomicInteger runs = new AtomicInteger();
        List<LeaseAttempt> attempts = new ArrayList<>();
        Outcome<String> first = leased().lease(IdempotentCall.of(KEY, ResultCodec.string()), attempt -> {
            attempts.add(attempt);
            return "r" + runs.incrementAndGet();
        });
        assertThat(first).isEqualTo(new Outcome.Executed<>(KEY, "r1"));
        assertThat(attempts.get(0).number()).isEqualTo(1);
        assertThat(attempts.get(0).resumed()).isFalse();
        assertThat(attempts.get(0).key()).isEqualTo(KEY);
        assertThat(attempts.get(0).leaseUntil()).isEqualTo(store.storeNow.plus(LeasePolicy.DEFAULT_LEASE));
        Outcome<String> second = leased().lease(IdempotentCall.of(KEY, ResultCodec.string()), attempt -> "r" + runs.incrementAndGet());
        assertThat(second).isEqualTo(new Outcome.Replayed<>(KEY, "r1", store.storeNow, store.storeNow.plus(KeyPolicy.DEFAULT_RETENTION)));
        assertThat(runs).hasValue(1);
        assertThat(store.committed(KEY).orElseThrow().expiresAt()).isEqualTo(store.storeNow.plus(KeyPolicy.DEFAULT_RETENTION));
        assertThat(events).containsExactly("outcome EXECUTED", "outcome REPLAYED");
    }

    @Test
    void theDownstreamKeyIsAnOpaqueDigestThatLeavesTheScopeOut() {
        List<String> sent = new ArrayList<>();
        leased().lease(IdempotentCall.of(IdempotencyKey.of("tenant-acme", "k1"), ResultCodec.string()), attempt -> {
            sent.add(attempt.downstreamKey().toString());
            sent.add(attempt.downstreamKey().id());
            sent.add(attempt.downstreamKey("ledger").toString());
            return "r";
        });
        assertThat(sent.get(0)).as("what a provider client sends, by toString()").doesNotContain("tenant-acme").matches("[0-9a-f]{64}")
                .isEqualTo(sent.get(1)).isEqualTo(IdempotencyKey.of("tenant-acme", "k1").derive("downstream").id());
        assertThat(sent.get(2)).matches("[0-9a-f]{64}").isEqualTo(IdempotencyKey.of("tenant-acme", "k1").derive("ledger").id())
                .isNotEqualTo(sent.get(0));
    }

    @Test
    void extendingTheLeaseOfAnAttemptThatIsOverSaysWhyInsteadOfBlamingATakeOver() {
        List<LeaseAttempt> attempts = new ArrayList<>();
        leased().lease(IdempotentCall.of(KEY, ResultCodec.string()), a -> {
            attempts.add(a);
            return "r";
        });
        IllegalStateException down = new IllegalStateException("down");
        IdempotencyKey failing = IdempotencyKey.of("jobs", "k2");
        assertThatThrownBy(() -> leased().lease(IdempotentCall.of(failing, ResultCodec.string()), a -> {
            attempts.add(a);
            throw down;
        })).isSameAs(down);
        assertThatThrownBy(() -> attempts.get(0).extend(Duration.ofSeconds(5))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("recorded the operation's outcome (EXECUTED)").hasMessageNotContaining("took the key over");
        int calls = store.calls.size();
        assertThatThrownBy(() -> attempts.get(1).extend(Duration.ofSeconds(5))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("its lease was ended").hasMessageNotContaining("took the key over");
        assertThat(store.calls).as("the ended lease was not extended again").hasSize(calls);
    }

    @Test
    void aLiveLeaseIsInProgressAndAnotherFingerprintAMismatch() {
        Instant until = store.storeNow.plusSeconds(10);
        store.putLeased(new StoredRecord(KEY, Fingerprint.of("a"), RecordStatus.IN_PROGRESS, null, null, store.storeNow, null,
                store.storeNow.plusSeconds(3600), until), "someone", 1, null);
        AtomicInteger runs = new AtomicInteger();
        assertThat(leased().lease(IdempotentCall.of(KEY, ResultCodec.string()).withFingerprint(Fingerprint.of("a")),
                a -> "r" + runs.incrementAndGet()))
                .isEqualTo(new Outcome.InProgress<>(KEY, until, Duration.ofSeconds(10)));
        assertThat(leased().lease(IdempotentCall.of(KEY, ResultCodec.string()).withFingerprint(Fingerprint.of("b")),
                a -> "r" + runs.incrementAndGet()))
                .isEqualTo(new Outcome.Mismatch<>(KEY));
        assertThat(runs).hasValue(0);
    }

    @Test
    void leaseWithTheBareKeyRecordsItsResultWithTheBuiltInCodecOfItsType() {
        assertThat(leased().lease(KEY, a -> 42L)).isEqualTo(new Outcome.Executed<>(KEY, 42L));
        assertThat(store.committed(KEY).orElseThrow().codec()).isEqualTo(ResultCodec.longs().name());
        Outcome<Long> replay = leased().lease(KEY, a -> {
            throw new AssertionError("a recorded key does not run again");
        });
        assertThat(replay.value()).isEqualTo(42L);
        assertThat(replay.isReplay()).isTrue();
    }

    @Test
    void leaseWithAResultOfNoBuiltInTypeAndNoCodecAsksForOneAndIsRecordedAsFailed() {
        AtomicInteger runs = new AtomicInteger();
        assertThatThrownBy(() -> leased().lease(KEY, a -> {
            runs.incrementAndGet();
            return Instant.EPOCH;
        })).isInstanceOf(ResultCodecException.class).hasMessageContaining("java.time.Instant")
                .hasMessageContaining("IdempotentCall.of(key, ResultCodec.of(").hasMessageContaining("recorded as failed")
                .hasMessageContaining("not run again");
        assertThat(store.calls).last().isEqualTo("completeLeased:k1");
        Outcome<Instant> retry = leased().lease(KEY, a -> {
            runs.incrementAndGet();
            return Instant.EPOCH;
        });
        assertThat(retry.status()).isEqualTo(Outcome.Status.FAILED);
        assertThat(retry.isReplay()).isTrue();
        assertThat(runs).hasValue(1);
    }

    @Test
    void runRefusesACallThatNamesAnotherCodecThanItsPhasesBeforeAnyAccess() {
        Phases<FakeTx, String, RuntimeException> phases = Phases.<FakeTx, String, RuntimeException>call(a -> "r")
                .result(ResultCodec.string());
        ResultCodec<String> other = ResultCodec.of("other-v1", s -> s, s -> s);
        assertThatThrownBy(() -> leased().run(IdempotentCall.of(KEY, other), phases)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'other-v1'").hasMessageContaining("'string'").hasMessageContaining("Nothing was read or written");
        assertThat(store.calls).isEmpty();
        assertThat(events).containsExactly("error IllegalArgumentException");
        assertThat(leased().run(IdempotentCall.of(KEY, ResultCodec.string()).withFingerprint(Fingerprint.of("a")), phases))
                .isEqualTo(new Outcome.Executed<>(KEY, "r"));
        assertThat(leased().run(IdempotentCall.of(KEY, Fingerprint.of("b")), phases)).isEqualTo(new Outcome.Mismatch<>(KEY));
    }

    @Test
    void aBusyLeaseClaimIsInProgressWithoutALeaseEnd() {
        store.busy.add(KEY);
        assertThat(leased().lease(IdempotentCall.of(KEY, ResultCodec.string()), a -> "r")).isEqualTo(new Outcome.InProgress<>(KEY, null));
        assertThat(runner.commits).isZero();
    }

    @Test
    void aFailedCallReleasesItsLeaseAndTheNextAttemptResumesAfterPrepare() {
        LeasedIdempotency<FakeTx> managed = leased();
        AtomicInteger prepares = new AtomicInteger();
        List<LeaseAttempt> attempts = new ArrayList<>();
        IllegalStateException down = new IllegalStateException("downstream is down");
        Phases<FakeTx, String, RuntimeException> phases = Phases.<FakeTx, Integer, RuntimeException>prepare(tx -> {
            tx.write("prepared");
            return 40 + prepares.incrementAndGet();
        }, ResultCodec.of("int-v1", String::valueOf, Integer::valueOf)).call((attempt, prepared) -> {
            attempts.add(attempt);
            if (attempts.size() == 1) {
                throw down;
            }
            return "called " + prepared;
        }).finish((tx, prepared, called) -> {
            tx.write("finished");
            return called + "!";
        }, ResultCodec.string());
        assertThatThrownBy(() -> managed.run(KEY, phases)).isSameAs(down);
        assertThat(store.calls).contains("releaseLease:k1");
        assertThat(store.committedPoint(KEY)).isEqualTo(new RecoveryPoint("int-v1", "41".getBytes()));
        assertThat(managed.run(KEY, phases)).isEqualTo(new Outcome.Executed<>(KEY, "called 41!"));
        assertThat(prepares).hasValue(1);
        assertThat(attempts.get(1).number()).isEqualTo(2);
        assertThat(attempts.get(1).resumed()).isTrue();
        assertThat(store.committedWrites()).containsExactly("prepared", "finished");
        assertThat(events).containsExactly("error IllegalStateException", "outcome EXECUTED");
    }

    @Test
    void aFailedLeaseReleaseIsSuppressed() {
        IllegalStateException down = new IllegalStateException("down");
        RuntimeException releaseFailure = new IllegalStateException("release fails");
        store.failRelease = releaseFailure;
        assertThatThrownBy(() -> leased().lease(IdempotentCall.of(KEY, ResultCodec.string()), a -> {
            throw down;
        })).isSameAs(down);
        assertThat(down.getSuppressed()).containsExactly(releaseFailure);
    }

    @Test
    void aFinalFailureInLeaseModeIsRecordedWithItsCompensation() {
        LeasedIdempotency<FakeTx> managed = leased(KeyPolicy.builder().finalFailures(IllegalArgumentException.class).build());
        List<String> compensated = new ArrayList<>();
        Phases<FakeTx, String, RuntimeException> phases = Phases.<FakeTx, String, RuntimeException>prepare(tx -> "p",
                ResultCodec.string()).<String>call((attempt, prepared) -> {
                    throw new IllegalArgumentException("declined");
                }).onFinalFailure((tx, prepared, failure) -> compensated.add(prepared + " " + failure.getMessage()))
                .result(ResultCodec.string());
        Outcome<String> outcome = managed.run(KEY, phases);
        assertThat(outcome).isEqualTo(new Outcome.Failed<>(KEY, IllegalArgumentException.class.getName(), "declined", store.storeNow,
                false));
        assertThat(compensated).containsExactly("p declined");
        StoredRecord record = store.committed(KEY).orElseThrow();
        assertThat(record.status()).isEqualTo(RecordStatus.FAILED);
        assertThat(record.codec()).isEqualTo(FailureRecords.CODEC);
        assertThat(managed.run(KEY, phases)).isEqualTo(new Outcome.Failed<>(KEY, IllegalArgumentException.class.getName(), "declined",
                store.storeNow, true));
    }

    @Test
    void aFailureToRecordAFinalFailureEndsTheLeaseAndCarriesTheFailure() {
        LeasedIdempotency<FakeTx> managed = leased(KeyPolicy.builder().finalFailures(IllegalArgumentException.class).build());
        RuntimeException completeFailure = new IllegalStateException("complete fails");
        store.failComplete = completeFailure;
        IllegalArgumentException declined = new IllegalArgumentException("declined");
        assertThatThrownBy(() -> managed.lease(IdempotentCall.of(KEY, ResultCodec.string()), a -> {
            throw declined;
        })).isSameAs(completeFailure);
        assertThat(completeFailure.getSuppressed()).containsExactly(declined);
        assertThat(store.calls).last().isEqualTo("releaseLease:k1");
    }

    @Test
    void aResultOverTheStoresOwnLimitIsRecordedAsFailedAndTheCallIsNotRunAgain() {
        store.completedResultLimit = 4;
        java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
        IdempotentCall<String> call = IdempotentCall.of(KEY, ResultCodec.string());
        assertThatThrownBy(() -> leased().lease(call, attempt -> {
            calls.incrementAndGet();
            return "a result of 26 bytes or so";
        })).isInstanceOfSatisfying(ResultTooLargeException.class, e -> {
            assertThat(e.reason()).isEqualTo("the result is 26 bytes, over the fake store's limit of 4 bytes");
            assertThat(e.getMessage()).contains("the operation is recorded as failed").doesNotContain("nothing was written");
            assertThat(e.getCause()).isInstanceOf(ResultTooLargeException.class).hasMessageContaining("nothing was written");
            assertThat(e.size()).isEqualTo(26);
            assertThat(e.limit()).isEqualTo(4);
        });
        assertThat(store.calls).doesNotContain("releaseLease:k1");
        Outcome<String> retry = leased().lease(call, attempt -> {
            calls.incrementAndGet();
            return "ok";
        });
        assertThat(retry.status()).as("the retry gets the recorded failure").isEqualTo(Outcome.Status.FAILED);
        assertThat(calls).as("the call ran once").hasValue(1);
    }

    @Test
    void aRecoveryPointOverTheStoresOwnLimitRecordsNothingOfTheKeyAndTheCallDoesNotRun() {
        store.recoveryPointLimit = 4;
        AtomicInteger prepares = new AtomicInteger();
        AtomicInteger calls = new AtomicInteger();
        Phases<FakeTx, String, RuntimeException> phases = Phases.<FakeTx, String, RuntimeException>prepare(tx -> {
            tx.write("prepared");
            prepares.incrementAndGet();
            return "a prepare value of 31 bytes or so";
        }, ResultCodec.string()).call((attempt, prepared) -> {
            calls.incrementAndGet();
            return "called";
        }).result(ResultCodec.string());
        assertThatThrownBy(() -> leased().run(KEY, phases)).isInstanceOfSatisfying(ResultTooLargeException.class, e -> {
            assertThat(e.reason()).isEqualTo("the recovery point is 33 bytes, over the fake store's limit of 4 bytes");
            assertThat(e.getMessage()).contains("the claim's transaction was rolled back, the prepare's writes with it: nothing of"
                    + " the key was recorded, and the call did not run").doesNotContain("nothing was written");
            assertThat(e.getCause()).isInstanceOf(ResultTooLargeException.class).hasMessageContaining("nothing was written");
            assertThat(e.limit()).isEqualTo(4);
        });
        assertThat(store.committed(KEY)).as("nothing of the key is recorded").isEmpty();
        assertThat(store.committedWrites()).as("the prepare's writes rolled back").isEmpty();
        store.recoveryPointLimit = Integer.MAX_VALUE;
        assertThat(leased().run(KEY, phases)).as("a retry claims the key anew, at once").isEqualTo(new Outcome.Executed<>(KEY, "called"));
        assertThat(prepares).hasValue(2);
        assertThat(calls).as("the call ran once, after the value fitted").hasValue(1);
    }

    @Test
    void aLostLeaseIsReportedAndNotReleased() {
        LeasedIdempotency<FakeTx> managed = leased();
        assertThatThrownBy(() -> managed.lease(IdempotentCall.of(KEY, ResultCodec.string()), attempt -> {
            store.loseLease = true;
            return "r";
        })).isInstanceOf(LeaseLostException.class);
        assertThat(store.calls).doesNotContain("releaseLease:k1");
        store.loseLease = false;
        IdempotencyKey other = IdempotencyKey.of("jobs", "k2");
        assertThatThrownBy(() -> managed.lease(IdempotentCall.of(other, ResultCodec.string()), attempt -> {
            store.loseLease = true;
            return attempt.extend(Duration.ofSeconds(5)).toString();
        })).isInstanceOf(LeaseLostException.class);
        assertThat(store.calls).doesNotContain("releaseLease:k2");
    }

    @Test
    void anExtendedLeaseEndsLater() {
        Instant extended = leased().lease(IdempotentCall.of(KEY, ResultCodec.of("instant-v1", Instant::toString, Instant::parse)),
                attempt -> {
            Instant end = attempt.extend(Duration.ofMinutes(2));
            assertThat(attempt.leaseUntil()).isEqualTo(end);
            return end;
        }).value();
        assertThat(extended).isEqualTo(store.storeNow.plus(Duration.ofMinutes(2)));
        assertThatThrownBy(() -> leased().lease(IdempotentCall.of(IdempotencyKey.of("k3"), ResultCodec.string()), attempt -> {
            attempt.extend(Duration.ofMillis(1));
            return "r";
        })).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lease");
    }

    @Test
    void anEndedLeaseIsTakenOverAsTheNextAttempt() {
        store.putLeased(new StoredRecord(KEY, Fingerprint.NONE, RecordStatus.IN_PROGRESS, null, null, store.storeNow, null,
                store.storeNow.plusSeconds(3600), store.storeNow), "crashed", 2, null);
        AtomicInteger number = new AtomicInteger();
        assertThat(leased().lease(IdempotentCall.of(KEY, ResultCodec.string()), attempt -> {
            number.set(attempt.number());
            return "r";
        }).status()).isEqualTo(Outcome.Status.EXECUTED);
        assertThat(number).hasValue(3);
    }

    @Test
    void aRecoveryPointOfAnotherCodecIsRefused() {
        store.putLeased(new StoredRecord(KEY, Fingerprint.NONE, RecordStatus.IN_PROGRESS, null, null, store.storeNow, null,
                store.storeNow.plusSeconds(3600), store.storeNow), "crashed", 1, new RecoveryPoint("other-v1", new byte[] {1}));
        Phases<FakeTx, String, RuntimeException> phases = Phases.<FakeTx, String, RuntimeException>prepare(tx -> "p",
                ResultCodec.string()).call((attempt, prepared) -> prepared).result(ResultCodec.string());
        assertThatThrownBy(() -> leased().run(KEY, phases)).isInstanceOf(ResultCodecException.class).hasMessageContaining("other-v1");
    }

    @Test
    void theManagedEngineHasTheDefaultRetryPolicy() {
        assertThat(ManagedIdempotency.of(Idempotency.of(store), runner).retryPolicy()).isSameAs(RetryPolicy.ofDefaults());
    }

    @Test
    void leaseModeSharesTheEnginesStoreAndRefusesAnother() {
        ManagedIdempotency<FakeTx> managed = managed();
        assertThat(LeasedIdempotency.of(managed, store).leasePolicy()).isSameAs(LeasePolicy.ofDefaults());
        assertThat(LeasedIdempotency.of(managed, store).keyPolicy()).isSameAs(managed.engine().keyPolicy());
        assertThatThrownBy(() -> LeasedIdempotency.of(managed, new FakeStore())).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("the store the engine was built over");
    }

    @Test
    void executeChunkRunsInATransactionOfItsOwnAndRetriesAConflict() {
        runner.commitFailures.add(conflict());
        List<Outcome<Integer>> outcomes = managed().executeChunk(List.of(1, 2), i -> IdempotentCall.of(IdempotencyKey.of("n" + i),
                ResultCodec.of("n-v1", String::valueOf, Integer::valueOf)), (tx, i) -> {
                    tx.write("item " + i);
                    return i * 10;
                });
        assertThat(outcomes).extracting(Outcome::value).containsExactly(10, 20);
        assertThat(runner.transactions).isEqualTo(2);
        assertThat(store.committedWrites()).containsExactly("item 1", "item 2");
    }

    @Test
    void aCallOfItsOwnTakesNoSavepointAndRecordsAFinalFailureInASecondTransaction() {
        ManagedIdempotency<FakeTx> strict = managed(KeyPolicy.builder().finalFailures(IllegalArgumentException.class).build());
        assertThat(strict.execute(IdempotencyKey.of("jobs", "done"), tx -> {
            tx.write("done");
            return "v";
        }).isExecuted()).isTrue();
        assertThat(runner.transactions).as("a work that returns: one transaction").isEqualTo(1);
        AtomicInteger runs = new AtomicInteger();
        Outcome<String> failed = strict.execute(KEY, tx -> {
            runs.incrementAndGet();
            tx.write("partial");
            throw new IllegalArgumentException("declined");
        });
        assertThat(failed.status()).isEqualTo(Outcome.Status.FAILED);
        assertThat(runner.transactions).as("the failure's own, rolled back, then the one recording it").isEqualTo(3);
        assertThat(store.committedWrites()).containsExactly("done");
        assertThat(store.calls).noneMatch(c -> c.startsWith("savepoint") || c.startsWith("release:"));
        assertThat(store.calls).endsWith("check:k1", "claim:k1", "complete:k1");
        assertThat(store.defaultsCalled).as("the failure written as write-last mode writes a record").containsExactly("writeLast:k1");
        Outcome<String> again = strict.execute(KEY, tx -> {
            runs.incrementAndGet();
            return "never";
        });
        assertThat(again.status()).isEqualTo(Outcome.Status.FAILED);
        assertThat(runs).hasValue(1);
        assertThat(events).containsExactly("outcome EXECUTED", "outcome FAILED", "outcome FAILED");
    }

    @Test
    void aFinalFailureWhoseKeyAnotherAttemptRecordedMeanwhileAnswersWithThatRecord() {
        Outcome<String> outcome = managed(KeyPolicy.builder().finalFailures(IllegalArgumentException.class).build()).execute(KEY, tx -> {
            tx.write("partial");
            store.put(FakeStore.completed(KEY, Fingerprint.NONE, "string", "theirs".getBytes(), Instant.now())); // after this rollback
            throw new IllegalArgumentException("declined");
        });
        assertThat(outcome.status()).isEqualTo(Outcome.Status.REPLAYED);
        assertThat(outcome.value()).isEqualTo("theirs");
        assertThat(store.committedWrites()).isEmpty();
        assertThat(store.calls).noneMatch(c -> c.startsWith("complete:"));
    }

    @Test
    void aChunkOfItsOwnTakesNoSavepointWhenNothingFailsFinally() {
        List<Outcome<Integer>> outcomes = managed(KeyPolicy.builder().finalFailures(IllegalArgumentException.class).build())
                .executeChunk(List.of(1, 2, 3), i -> IdempotentCall.of(IdempotencyKey.of("n" + i), ResultCodec.integer()), (tx, i) -> {
                    tx.write("item " + i);
                    return i;
                });
        assertThat(outcomes).extracting(Outcome::value).containsExactly(1, 2, 3);
        assertThat(store.calls).noneMatch(c -> c.startsWith("savepoint"));
        assertThat(runner.transactions).isEqualTo(1);
    }

    @Test
    void aFinalFailureInAChunkOfItsOwnRunsTheChunkAgainWithASavepointPerItem() {
        List<Integer> ran = new ArrayList<>();
        List<Outcome<Integer>> outcomes = managed(KeyPolicy.builder().finalFailures(IllegalArgumentException.class).build())
                .executeChunk(List.of(1, 2, 3), i -> IdempotentCall.of(IdempotencyKey.of("n" + i), ResultCodec.integer()), (tx, i) -> {
                    ran.add(i);
                    tx.write("item " + i);
                    if (i == 2) {
                        throw new IllegalArgumentException("declined " + i);
                    }
                    return i;
                });
        assertThat(outcomes).extracting(Outcome::status)
                .containsExactly(Outcome.Status.EXECUTED, Outcome.Status.FAILED, Outcome.Status.EXECUTED);
        assertThat(ran).containsExactly(1, 2, 1, 2, 3);
        assertThat(runner.transactions).isEqualTo(2);
        assertThat(store.committedWrites()).containsExactly("item 1", "item 3");
        assertThat(store.calls).filteredOn(c -> c.startsWith("savepoint")).containsExactly("savepoint", "savepoint-release",
                "savepoint", "savepoint-rollback", "savepoint", "savepoint-release");
        assertThat(store.calls).noneMatch(c -> c.startsWith("release:"));
    }

    @Test
    void aWaitingAttemptPollsUntilTheHolderRecordsItsResult() {
        Instant until = store.storeNow.plusSeconds(10);
        store.putLeased(new StoredRecord(KEY, Fingerprint.NONE, RecordStatus.IN_PROGRESS, null, null, store.storeNow, null,
                store.storeNow.plusSeconds(3600), until), "holder", 1, null);
        AtomicInteger polls = new AtomicInteger();
        store.onClaimLease = tx -> {
            if (polls.incrementAndGet() == 3) {
                store.put(tx, FakeStore.completed(KEY, Fingerprint.NONE, "string", "theirs".getBytes(), store.storeNow));
            }
        };
        LeasedIdempotency<FakeTx> managed = LeasedIdempotency.of(ManagedIdempotency.builder(Idempotency.of(store), runner)
                .retryPolicy(NO_PAUSE).build(), store,
                LeasePolicy.builder().waitForHolder(Duration.ofMinutes(10)).pollInterval(Duration.ofMillis(1)).build());
        assertThat(managed.lease(IdempotentCall.of(KEY, ResultCodec.string()), a -> "mine")).isEqualTo(new Outcome.Replayed<>(KEY,
                "theirs", store.storeNow, store.storeNow.plus(Duration.ofDays(1))));
        assertThat(polls).hasValue(3);
    }

    @Test
    void anInterruptedWaitEndsInProgressAndAnInterruptedBackoffEndsTheRetries() {
        Instant until = store.storeNow.plusSeconds(10);
        store.putLeased(new StoredRecord(KEY, Fingerprint.NONE, RecordStatus.IN_PROGRESS, null, null, store.storeNow, null,
                store.storeNow.plusSeconds(3600), until), "holder", 1, null);
        ManagedIdempotency<FakeTx> engine = ManagedIdempotency.builder(Idempotency.of(store), runner).retryPolicy(NO_PAUSE).build();
        LeasedIdempotency<FakeTx> managed = LeasedIdempotency.of(engine, store,
                LeasePolicy.builder().waitForHolder(Duration.ofMinutes(10)).pollInterval(Duration.ofMinutes(1)).build());
        try {
            Thread.currentThread().interrupt();
            assertThat(managed.lease(IdempotentCall.of(KEY, ResultCodec.string()),
                    a -> "mine")).isEqualTo(new Outcome.InProgress<>(KEY, until, Duration.ofSeconds(10)));
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
            runner.commitFailures.add(conflict());
            IdempotencyKey other = IdempotencyKey.of("jobs", "k2");
            assertThatThrownBy(() -> engine.execute(other, tx -> "r")).isInstanceOf(TransactionConflictException.class);
            assertThat(runner.transactions).isEqualTo(2);
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void everyAttemptHasARandomOwnerToken() {
        leased().lease(IdempotentCall.of(KEY, ResultCodec.string()), a -> "r");
        leased().lease(IdempotentCall.of(IdempotencyKey.of("k2"), ResultCodec.string()), a -> "r");
        assertThat(store.ownerTokens).hasSize(2).allSatisfy(t -> assertThat(t).hasSize(32).isNotEqualTo("0".repeat(32)))
                .doesNotHaveDuplicates();
    }

    @Test
    void aFailedFinishEndsTheLease() {
        IllegalStateException finishFailure = new IllegalStateException("finish fails");
        Phases<FakeTx, String, RuntimeException> phases = Phases.<FakeTx, String, RuntimeException>call(a -> "called")
                .finish((tx, prepared, called) -> {
                    throw finishFailure;
                }, ResultCodec.string());
        assertThatThrownBy(() -> leased().run(KEY, phases)).isSameAs(finishFailure);
        assertThat(store.calls).last().isEqualTo("releaseLease:k1");
    }

    @Test
    void aLeaseLostWhileRecordingAFinalFailureCarriesTheFailure() {
        LeasedIdempotency<FakeTx> managed = leased(KeyPolicy.builder().finalFailures(IllegalArgumentException.class).build());
        IllegalArgumentException declined = new IllegalArgumentException("declined");
        assertThatThrownBy(() -> managed.lease(IdempotentCall.of(KEY, ResultCodec.string()), a -> {
            store.loseLease = true;
            throw declined;
        })).isInstanceOfSatisfying(LeaseLostException.class, lost -> assertThat(lost.getSuppressed()).containsExactly(declined));
        assertThat(store.calls).doesNotContain("releaseLease:k1");
    }

    @Test
    void aResultOfExactlyTheLimitIsRecordedInLeaseModeAndOneByteMoreIsRecordedAsFailed() {
        LeasedIdempotency<FakeTx> managed = leased(KeyPolicy.builder().maxResultBytes(2).build());
        assertThat(managed.lease(IdempotentCall.of(KEY, ResultCodec.string()), a -> "ab").status()).isEqualTo(Outcome.Status.EXECUTED);
        IdempotencyKey k2 = IdempotencyKey.of("k2");
        assertThatThrownBy(() -> managed.lease(IdempotentCall.of(k2, ResultCodec.string()), a -> "abc"))
                .isInstanceOfSatisfying(ResultTooLargeException.class, e -> assertThat(e.size()).isEqualTo(3));
        assertThat(store.calls).doesNotContain("releaseLease:k2");
        assertThat(store.committed(k2).orElseThrow().status()).isEqualTo(RecordStatus.FAILED);
    }

    @Test
    void anEmptyChunkNeedsNoKey() {
        assertThat(managed().executeChunk(List.<Integer>of(), i -> {
            throw new AssertionError("no item");
        }, (tx, i) -> "r")).isEmpty();
    }
}
