package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.fake.FakeStore;
import dev.idempotency.fake.FakeTx;
import dev.idempotency.internal.FailureRecords;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.StoredRecord;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class IdempotencyEngineTest {

    static final Instant T0 = Instant.parse("2026-01-01T10:00:00.123456789Z");
    static final Instant T0_MS = Instant.parse("2026-01-01T10:00:00.123Z");
    static final IdempotencyKey KEY = IdempotencyKey.of("orders", "k1");

    final FakeStore store = new FakeStore();
    final List<String> events = new ArrayList<>();

    Idempotency<FakeTx> engine(KeyPolicy policy) {
        return Idempotency.builder(store).keyPolicy(policy).clock(() -> T0).build();
    }

    Idempotency<FakeTx> engine() {
        return engine(KeyPolicy.ofDefaults());
    }

    <T> Outcome<T> committed(Idempotency<FakeTx> engine, Work<T, RuntimeException> work) {
        FakeTx tx = store.begin();
        Outcome<T> outcome = engine.execute(KEY, tx, work);
        store.commit(tx);
        return outcome;
    }

    @Test
    void aWorkRunsOnceAndItsResultIsReplayed() {
        AtomicInteger runs = new AtomicInteger();
        Idempotency<FakeTx> engine = engine();
        Outcome<String> first = committed(engine, () -> "r" + runs.incrementAndGet());
        Outcome<String> second = committed(engine, () -> "r" + runs.incrementAndGet());
        assertThat(first).isEqualTo(new Outcome.Executed<>(KEY, "r1"));
        assertThat(second).isEqualTo(new Outcome.Replayed<>(KEY, "r1", T0_MS, T0_MS.plus(KeyPolicy.DEFAULT_RETENTION)));
        assertThat(runs).hasValue(1);
        StoredRecord record = store.committed(KEY).orElseThrow();
        assertThat(record.status()).isEqualTo(RecordStatus.COMPLETED);
        assertThat(record.codec()).isEqualTo("string");
        assertThat(record.completedAt()).isEqualTo(T0_MS);
        assertThat(record.expiresAt()).isEqualTo(T0_MS.plus(KeyPolicy.DEFAULT_RETENTION));
        ClaimRequest request = store.claimRequests.get(0);
        assertThat(request.now()).isEqualTo(T0_MS);
        assertThat(request.expiresAt()).isEqualTo(T0_MS.plus(KeyPolicy.DEFAULT_RETENTION));
        assertThat(request.lockTimeout()).isEqualTo(KeyPolicy.DEFAULT_LOCK_TIMEOUT);
        assertThat(store.calls).containsExactly("check:k1", "claim:k1", "check:k1", "complete:k1", "check:k1", "claim:k1");
    }

    @Test
    void aResultOfExactlyTheLimitIsRecordedAndOneByteMoreIsRefusedAndReleased() {
        Idempotency<FakeTx> engine = engine(KeyPolicy.builder().maxResultBytes(4).build());
        FakeTx tx = store.begin();
        assertThat(engine.execute(KEY, tx, () -> "abcd").status()).isEqualTo(Outcome.Status.EXECUTED);
        assertThat(store.in(tx, KEY)).map(StoredRecord::result).contains("abcd".getBytes(StandardCharsets.UTF_8));

        IdempotencyKey other = IdempotencyKey.of("orders", "k2");
        assertThatThrownBy(() -> engine.execute(other, tx, () -> "abcde"))
                .isInstanceOfSatisfying(ResultTooLargeException.class, e -> {
                    assertThat(e.size()).isEqualTo(5);
                    assertThat(e.limit()).isEqualTo(4);
                });
        assertThat(store.in(tx, other)).isEmpty();
        assertThat(store.calls).contains("release:k2");
    }

    @Test
    void aNullResultIsRecordedWithoutBytesAndReplayedAsNull() {
        Idempotency<FakeTx> engine = engine(KeyPolicy.builder().maxResultBytes(0).build());
        assertThat(committed(engine, () -> null)).isEqualTo(new Outcome.Executed<>(KEY, null));
        assertThat(store.committed(KEY).orElseThrow().codec()).isEqualTo("none");
        assertThat(store.committed(KEY).orElseThrow().result()).isNull();
        assertThat(committed(engine, () -> "x")).isEqualTo(new Outcome.Replayed<>(KEY, null, T0_MS, T0_MS.plus(KeyPolicy.DEFAULT_RETENTION)));
    }

    @Test
    void aReplayComparesTheFingerprint() {
        Idempotency<FakeTx> engine = engine();
        Fingerprint a = Fingerprint.of("a");
        Fingerprint b = Fingerprint.of("b");
        FakeTx tx = store.begin();
        engine.execute(IdempotentCall.of(KEY, a), tx, () -> "r");
        store.commit(tx);
        assertThat(engine.execute(IdempotentCall.of(KEY, b), store.begin(), () -> "x")).isEqualTo(new Outcome.Mismatch<>(KEY));
        assertThat(engine.execute(KEY, store.begin(), () -> "x")).isEqualTo(new Outcome.Mismatch<>(KEY));
        assertThat(engine.execute(IdempotentCall.of(KEY, ResultCodec.string()).withFingerprint(Fingerprint.of("a")), store.begin(),
                () -> "x"))
                .isEqualTo(new Outcome.Replayed<>(KEY, "r", T0_MS, T0_MS.plus(KeyPolicy.DEFAULT_RETENTION)));
    }

    @Test
    void purgeExpiredPassesItsLimitAndRefusesLessThanOne() {
        Idempotency<FakeTx> engine = engine();
        for (String id : List.of("a", "b")) {
            store.put(new StoredRecord(IdempotencyKey.of(id), Fingerprint.NONE, RecordStatus.COMPLETED, "string", new byte[0],
                    T0.minusSeconds(10), T0.minusSeconds(10), T0));
        }
        FakeTx tx = store.begin();
        assertThat(engine.purgeExpired(tx, 1)).isEqualTo(1);
        assertThat(store.purgeLimits).containsExactly(1);
        assertThatThrownBy(() -> engine.purgeExpired(tx, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least 1, was 0");
        assertThatThrownBy(() -> engine.purgeExpired(null, 1)).isInstanceOf(NullPointerException.class);
        assertThat(store.purgeLimits).containsExactly(1);
    }

    @Test
    void theListenerHearsEveryOutcomeAndErrorAndAThrowingListenerIsIgnored() {
        IdempotencyListener listener = new IdempotencyListener() {
            @Override
            public void onOutcome(IdempotencyKey key, Outcome.Status status, Duration elapsed) {
                events.add("outcome " + key.id() + " " + status);
                assertThat(elapsed.isNegative()).isFalse();
                throw new IllegalStateException("listener fails");
            }

            @Override
            public void onError(IdempotencyKey key, Throwable failure, Duration elapsed) {
                events.add("error " + key.id() + " " + failure.getMessage());
                throw new IllegalStateException("listener fails");
            }
        };
        Idempotency<FakeTx> engine = Idempotency.builder(store).clock(() -> T0).listener(listener).build();
        assertThat(committed(engine, () -> "r").status()).isEqualTo(Outcome.Status.EXECUTED);
        assertThat(committed(engine, () -> "r").status()).isEqualTo(Outcome.Status.REPLAYED);
        IllegalArgumentException boom = new IllegalArgumentException("boom");
        IdempotencyKey other = IdempotencyKey.of("k2");
        assertThatThrownBy(() -> engine.execute(other, store.begin(), () -> {
            throw boom;
        })).isSameAs(boom);
        assertThat(boom.getSuppressed()).isEmpty();
        assertThat(events).containsExactly("outcome k1 EXECUTED", "outcome k1 REPLAYED", "error k2 boom");
    }

    @Test
    void anAdaptersDuplicateCauseReachesTheListenerAndAThrowingListenerIsIgnored() {
        IdempotencyListener listener = new IdempotencyListener() {
            @Override
            public void onDuplicate(IdempotencyKey key, String cause) {
                events.add("duplicate " + key.id() + " " + cause);
                throw new IllegalStateException("listener fails");
            }
        };
        Idempotency<FakeTx> engine = Idempotency.builder(store).clock(() -> T0).listener(listener).build();
        engine.reportDuplicate(KEY, "redelivered");
        engine.reportDuplicate(IdempotencyKey.of("k2"), "sent-again");
        assertThat(events).containsExactly("duplicate k1 redelivered", "duplicate k2 sent-again");
        assertThatThrownBy(() -> engine.reportDuplicate(null, "x")).isInstanceOf(NullPointerException.class).hasMessage("key");
        assertThatThrownBy(() -> engine.reportDuplicate(KEY, null)).isInstanceOf(NullPointerException.class).hasMessage("cause");
        Idempotency.builder(store).build().reportDuplicate(KEY, "redelivered"); // no listener: nothing to tell
        assertThat(events).hasSize(2);
    }

    @Test
    void theListenerHearsHowLongTheCallTookNeverMoreThanTheCallerSaw() {
        List<Duration> heard = new ArrayList<>();
        Idempotency<FakeTx> engine = Idempotency.builder(store).clock(() -> T0).listener(new IdempotencyListener() {
            @Override
            public void onOutcome(IdempotencyKey key, Outcome.Status status, Duration elapsed) {
                heard.add(elapsed);
            }

            @Override
            public void onError(IdempotencyKey key, Throwable failure, Duration elapsed) {
                heard.add(elapsed);
            }
        }).build();
        long started = System.nanoTime();
        committed(engine, () -> "r");
        assertThatThrownBy(() -> engine.execute(IdempotencyKey.of("k2"), store.begin(), () -> {
            throw new IllegalStateException("boom");
        })).hasMessage("boom");
        Duration around = Duration.ofNanos(System.nanoTime() - started);
        assertThat(heard).hasSize(2).allSatisfy(elapsed -> assertThat(elapsed).isBetween(Duration.ZERO, around));
    }

    @Test
    void aWorkThatThrowsLeavesNoClaimAndAFailedReleaseIsSuppressed() {
        Idempotency<FakeTx> engine = engine();
        FakeTx tx = store.begin();
        IllegalStateException boom = new IllegalStateException("boom");
        assertThatThrownBy(() -> engine.execute(KEY, tx, () -> {
            throw boom;
        })).isSameAs(boom);
        assertThat(store.in(tx, KEY)).isEmpty();

        RuntimeException releaseFailure = new IdempotencyStoreException(KEY, "release fails", null);
        store.failRelease = releaseFailure;
        IllegalStateException again = new IllegalStateException("again");
        assertThatThrownBy(() -> engine.execute(KEY, tx, () -> {
            throw again;
        })).isSameAs(again);
        assertThat(again.getSuppressed()).containsExactly(releaseFailure);
    }

    @Test
    void aFailedSavepointReleasesTheClaimWithoutRunningTheWork() {
        Idempotency<FakeTx> engine = engine(KeyPolicy.builder().finalFailures(IllegalStateException.class).build());
        RuntimeException savepointFailure = new IdempotencyStoreException(KEY, "no savepoint", null);
        RuntimeException releaseFailure = new IdempotencyStoreException(KEY, "release fails", null);
        store.failSavepoint = savepointFailure;
        store.failRelease = releaseFailure;
        AtomicInteger runs = new AtomicInteger();
        assertThatThrownBy(() -> engine.execute(KEY, store.begin(), runs::incrementAndGet)).isSameAs(savepointFailure);
        assertThat(savepointFailure.getSuppressed()).containsExactly(releaseFailure);
        assertThat(runs).hasValue(0);
        assertThat(store.calls).containsExactly("check:k1", "claim:k1", "savepoint", "release:k1");
    }

    @Test
    void aFailedCompletionReleasesTheClaimAndAFailedReleaseIsSuppressed() {
        Idempotency<FakeTx> engine = engine();
        RuntimeException completeFailure = new IdempotencyStoreException(KEY, "complete fails", null);
        RuntimeException releaseFailure = new IdempotencyStoreException(KEY, "release fails", null);
        store.failComplete = completeFailure;
        store.failRelease = releaseFailure;
        assertThatThrownBy(() -> engine.execute(KEY, store.begin(), () -> "r")).isSameAs(completeFailure);
        assertThat(completeFailure.getSuppressed()).containsExactly(releaseFailure);
        assertThat(store.calls).endsWith("complete:k1", "release:k1");
    }

    @Test
    void aFinalFailureIsUndoneToTheSavepointRecordedAndReplayed() {
        Idempotency<FakeTx> engine = engine(KeyPolicy.builder().finalFailures(IllegalStateException.class).build());
        FakeTx tx = store.begin();
        tx.write("before");
        Outcome<String> outcome = engine.execute(KEY, tx, () -> {
            tx.write("partial");
            throw new IllegalStateException("declined");
        });
        assertThat(outcome).isEqualTo(new Outcome.Failed<>(KEY, IllegalStateException.class.getName(), "declined", T0_MS, false));
        assertThat(tx.writes).containsExactly("before");
        store.commit(tx);
        StoredRecord record = store.committed(KEY).orElseThrow();
        assertThat(record.status()).isEqualTo(RecordStatus.FAILED);
        assertThat(record.codec()).isEqualTo(FailureRecords.CODEC);
        assertThat(record.expiresAt()).isEqualTo(T0_MS.plus(KeyPolicy.DEFAULT_RETENTION));
        assertThat(engine.execute(KEY, store.begin(), () -> "x"))
                .isEqualTo(new Outcome.Failed<>(KEY, IllegalStateException.class.getName(), "declined", T0_MS, true));
    }

    @Test
    void aFailureToRecordAFinalFailureReleasesTheClaimAndCarriesTheFailure() {
        Idempotency<FakeTx> engine = engine(KeyPolicy.builder().finalFailures(IllegalStateException.class).build());
        RuntimeException completeFailure = new IdempotencyStoreException(KEY, "complete fails", null);
        store.failComplete = completeFailure;
        IllegalStateException declined = new IllegalStateException("declined");
        assertThatThrownBy(() -> engine.execute(KEY, store.begin(), () -> {
            throw declined;
        })).isSameAs(completeFailure);
        assertThat(completeFailure.getSuppressed()).containsExactly(declined);
        assertThat(store.calls).endsWith("savepoint-rollback", "complete:k1", "release:k1");
    }

    @Test
    void aFailureThatIsNotFinalReleasesTheSavepointPathAndPassesThrough() {
        Idempotency<FakeTx> engine = engine(KeyPolicy.builder().finalFailures(IllegalStateException.class).build());
        FakeTx tx = store.begin();
        IllegalArgumentException other = new IllegalArgumentException("other");
        assertThatThrownBy(() -> engine.execute(KEY, tx, () -> {
            throw other;
        })).isSameAs(other);
        assertThat(store.in(tx, KEY)).isEmpty();
        assertThat(store.calls).doesNotContain("savepoint-rollback");
        AssertionError error = new AssertionError("an error is never final");
        Idempotency<FakeTx> all = engine(KeyPolicy.builder().finalFailureIf(t -> true).build());
        assertThatThrownBy(() -> all.execute(KEY, tx, () -> {
            throw error;
        })).isSameAs(error);
        assertThat(store.in(tx, KEY)).isEmpty();
    }

    @Test
    void aSuccessReleasesTheSavepoint() {
        Idempotency<FakeTx> engine = engine(KeyPolicy.builder().finalFailures(IllegalStateException.class).build());
        engine.execute(KEY, store.begin(), () -> "r");
        assertThat(store.calls).containsExactly("check:k1", "claim:k1", "savepoint", "check:k1", "savepoint-release", "complete:k1");
    }

    @Test
    void aThrowingFinalFailurePredicateMeansNotFinal() {
        RuntimeException predicateFailure = new IllegalStateException("predicate fails");
        Idempotency<FakeTx> engine = engine(KeyPolicy.builder().finalFailureIf(t -> {
            throw predicateFailure;
        }).build());
        FakeTx tx = store.begin();
        IllegalArgumentException failure = new IllegalArgumentException("work fails");
        assertThatThrownBy(() -> engine.execute(KEY, tx, () -> {
            throw failure;
        })).isSameAs(failure);
        assertThat(failure.getSuppressed()).containsExactly(predicateFailure);
        assertThat(store.in(tx, KEY)).isEmpty();
        assertThat(engine.kernel().isFinal(new IllegalArgumentException())).isFalse();
        Idempotency<FakeTx> yes = engine(KeyPolicy.builder().finalFailureIf(t -> true).build());
        assertThat(yes.kernel().isFinal(new IllegalArgumentException())).isTrue();
    }

    @Test
    void aKeyHeldPastTheLockTimeoutIsInProgressAndTheWorkDoesNotRun() {
        store.busy.add(KEY);
        AtomicInteger runs = new AtomicInteger();
        assertThat(engine().execute(KEY, store.begin(), runs::incrementAndGet)).isEqualTo(new Outcome.InProgress<>(KEY));
        assertThat(runs).hasValue(0);
    }

    @Test
    void aWorkThatEndsItsTransactionLeavesTheClaimAndEveryLaterAttemptIsRefused() {
        Idempotency<FakeTx> engine = engine();
        FakeTx tx = store.begin();
        assertThatThrownBy(() -> engine.execute(KEY, tx, () -> {
            tx.open = false;
            return "r";
        })).isInstanceOf(AbandonedClaimException.class).hasCauseInstanceOf(TransactionRequiredException.class);
        assertThat(store.calls).doesNotContain("release:k1", "complete:k1");
        assertThat(store.in(tx, KEY)).map(StoredRecord::status).contains(RecordStatus.IN_PROGRESS);
        store.commit(tx);
        assertThatThrownBy(() -> engine.execute(KEY, store.begin(), () -> "again")).isInstanceOf(AbandonedClaimException.class)
                .hasMessageContaining("no transaction holds it");
    }

    @Test
    void aClosedTransactionIsRefusedBeforeAnyClaim() {
        FakeTx tx = store.begin();
        tx.open = false;
        assertThatThrownBy(() -> engine().execute(KEY, tx, () -> "r")).isInstanceOf(TransactionRequiredException.class);
        assertThat(store.calls).containsExactly("check:k1");
    }

    @Test
    void aFailedCheckAfterTheWorkReleasesTheClaim() {
        RuntimeException checkFailure = new IdempotencyStoreException(KEY, "check fails", null);
        store.failCheck = checkFailure;
        store.failCheckAt = 1;
        FakeTx tx = store.begin();
        assertThatThrownBy(() -> engine().execute(KEY, tx, () -> "r")).isSameAs(checkFailure);
        assertThat(store.in(tx, KEY)).isEmpty();
    }

    @Test
    void aRecordInProgressUnderALeaseIsInProgressUntilItsLeaseEnds() {
        Instant until = T0.plusSeconds(30);
        store.put(new StoredRecord(KEY, Fingerprint.NONE, RecordStatus.IN_PROGRESS, null, null, T0, null, T0.plusSeconds(3600), until));
        assertThat(engine().execute(KEY, store.begin(), () -> "r")).isEqualTo(new Outcome.InProgress<>(KEY, until, null, T0.plusSeconds(3600)));
    }

    @Test
    void aReplayDecodesWithTheRecordedCodecOrRefusesAnotherOne() {
        ResultCodec<String> upper = ResultCodec.of("upper-v1", String::toUpperCase, s -> s + "!");
        Idempotency<FakeTx> engine = engine();
        FakeTx tx = store.begin();
        engine.execute(IdempotentCall.of(KEY, upper), tx, () -> "abc");
        store.commit(tx);
        assertThat(engine.execute(IdempotentCall.of(KEY, upper), store.begin(), () -> "x")).isEqualTo(new Outcome.Replayed<>(KEY,
                "ABC!", T0_MS, T0_MS.plus(KeyPolicy.DEFAULT_RETENTION)));
        assertThatThrownBy(() -> engine.execute(IdempotentCall.of(KEY, ResultCodec.string()), store.begin(), () -> "x"))
                .isInstanceOf(ResultCodecException.class).hasMessageContaining("upper-v1");
        assertThatThrownBy(() -> engine.execute(KEY, store.begin(), () -> "x"))
                .isInstanceOf(ResultCodecException.class).hasMessageContaining("not a built-in one");
        ResultCodec<String> broken = ResultCodec.of("upper-v1", s -> s, s -> {
            throw new IllegalStateException("cannot decode");
        });
        assertThatThrownBy(() -> engine.execute(IdempotentCall.of(KEY, broken), store.begin(), () -> "x"))
                .isInstanceOf(ResultCodecException.class).hasMessageContaining("failed to decode")
                .hasCauseInstanceOf(IllegalStateException.class);
    }

    @Test
    void aResultWithoutACodecOrThatCannotBeEncodedReleasesTheClaim() {
        Idempotency<FakeTx> engine = engine();
        FakeTx tx = store.begin();
        assertThatThrownBy(() -> engine.execute(KEY, tx, () -> new Object())).isInstanceOf(ResultCodecException.class)
                .hasMessageContaining("no built-in codec");
        assertThat(store.in(tx, KEY)).isEmpty();
        ResultCodec<String> failing = ResultCodec.of("failing-v1", s -> {
            throw new IllegalStateException("cannot encode");
        }, s -> s);
        assertThatThrownBy(() -> engine.execute(IdempotentCall.of(KEY, failing), tx, () -> "r")).isInstanceOf(ResultCodecException.class)
                .hasMessageContaining("failed to encode").hasCauseInstanceOf(IllegalStateException.class);
        assertThat(store.in(tx, KEY)).isEmpty();
        ResultCodec<String> nullBytes = new ResultCodec<>() {
            @Override
            public String name() {
                return "null-v1";
            }

            @Override
            public byte[] encode(String value) {
                return null;
            }

            @Override
            public String decode(byte[] bytes) {
                return null;
            }
        };
        assertThatThrownBy(() -> engine.execute(IdempotentCall.of(KEY, nullBytes), tx, () -> "r")).isInstanceOf(ResultCodecException.class)
                .hasMessageContaining("encoded a result as null");
        assertThat(store.in(tx, KEY)).isEmpty();
    }

    @Test
    void anInvalidKeyOrMissingArgumentIsRefusedBeforeTheStoreAndReported() {
        List<Throwable> errors = new ArrayList<>();
        Idempotency<FakeTx> engine = Idempotency.builder(store).listener(new IdempotencyListener() {
            @Override
            public void onError(IdempotencyKey key, Throwable failure, Duration elapsed) {
                errors.add(failure);
            }
        }).build();
        IdempotencyKey tooLong = IdempotencyKey.of("x".repeat(KeyPolicy.DEFAULT_MAX_ID_LENGTH + 1));
        assertThatThrownBy(() -> engine.execute(tooLong, store.begin(), () -> "r")).isInstanceOf(InvalidKeyException.class);
        assertThatThrownBy(() -> engine.execute(KEY, null, () -> "r")).isInstanceOf(NullPointerException.class);
        assertThat(errors).hasSize(2);
        assertThat(store.calls).isEmpty();
        assertThat(engine.store()).isSameAs(store);
        assertThat(engine.keyPolicy()).isSameAs(KeyPolicy.ofDefaults());
        assertThat(Idempotency.of(store).toString()).contains("Idempotency[");
    }

    @Test
    void aReplayReportsWhenTheRecordWasCompletedOrElseCreated() {
        Instant created = T0_MS.minusSeconds(60);
        store.put(new StoredRecord(KEY, Fingerprint.NONE, RecordStatus.COMPLETED, "string", "r".getBytes(StandardCharsets.UTF_8),
                created, T0_MS, T0_MS.plusSeconds(60)));
        assertThat(engine().execute(KEY, store.begin(), () -> "x")).isEqualTo(new Outcome.Replayed<>(KEY, "r", T0_MS, T0_MS.plusSeconds(60)));
        store.put(new StoredRecord(KEY, Fingerprint.NONE, RecordStatus.COMPLETED, "string", "r".getBytes(StandardCharsets.UTF_8),
                created, null, T0_MS.plusSeconds(60)));
        assertThat(engine().execute(KEY, store.begin(), () -> "x")).isEqualTo(new Outcome.Replayed<>(KEY, "r", created, T0_MS.plusSeconds(60)));
    }
    @Test
    void aWorkThatRunsItsOwnKeyAgainInItsOwnTransactionIsRefusedAsNestedNotAsCommitted() {
        Idempotency<FakeTx> engine = engine();
        FakeTx tx = store.begin();
        assertThatThrownBy(() -> engine.execute(KEY, tx, () -> engine.execute(KEY, tx, () -> "inner").value()))
                .isInstanceOf(NestedKeyException.class)
                .hasMessageContaining("called again with its own key inside its own work, in the same transaction")
                .hasMessageNotContaining("is committed").hasMessageNotContaining("no transaction holds it");
        assertThat(engine.execute(IdempotencyKey.of("orders", "other"), tx, () -> engine.execute(KEY, tx, () -> "inner").value()))
                .as("another key's work may run this key").isEqualTo(new Outcome.Executed<>(IdempotencyKey.of("orders", "other"), "inner"));
    }
}
