package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.fake.FakeRunner;
import dev.idempotency.fake.FakeStore;
import dev.idempotency.fake.FakeTx;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.LastWriteRefusedException;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.StoredRecord;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Write-last mode's protocol in the engine, over the fake store and runner (the databases: {@code AbstractWriteLastTest}). */
class ManagedWriteLastTest {

    static final IdempotencyKey KEY = IdempotencyKey.of("jobs", "k1");

    final FakeStore store = new FakeStore();
    final FakeRunner runner = new FakeRunner(store);

    ManagedIdempotency<FakeTx> managed(KeyPolicy policy) {
        return ManagedIdempotency.builder(Idempotency.builder(store).keyPolicy(policy).build(), runner)
                .retryPolicy(RetryPolicy.builder().maxAttempts(3).backoff(Duration.ZERO, Duration.ZERO).build()).build();
    }

    static StoredRecord completed(String value) {
        Instant at = Instant.parse("2026-01-01T00:00:00Z");
        return new StoredRecord(KEY, Fingerprint.NONE, RecordStatus.COMPLETED, ResultCodec.string().name(),
                value.getBytes(StandardCharsets.UTF_8), at, at, Instant.MAX);
    }

    static String work(FakeTx tx, String value) {
        tx.write(value);
        return value;
    }

    @Test
    void theWorkRunsFirstAndItsRecordCommitsWithIt() {
        Outcome<String> first = managed(KeyPolicy.ofDefaults()).writeLast(KEY, tx -> work(tx, "w1"));
        Outcome<String> retry = managed(KeyPolicy.ofDefaults()).writeLast(KEY, tx -> work(tx, "w2"));
        assertThat(first).isEqualTo(new Outcome.Executed<>(KEY, "w1"));
        assertThat(retry).isInstanceOf(Outcome.Replayed.class).extracting(Outcome::value).isEqualTo("w1");
        assertThat(store.committedWrites()).containsExactly("w1");
        assertThat(runner.commits).isEqualTo(1);
    }

    @Test
    void aRefusalAtCommitAnswersFromTheRecordItCarries() {
        runner.commitFailures.add(new LastWriteRefusedException(KEY, Claim.existing(completed("won")), null));
        Outcome<String> outcome = managed(KeyPolicy.ofDefaults()).writeLast(IdempotentCall.of(KEY, ResultCodec.string()),
                tx -> work(tx, "mine"));
        assertThat(outcome).isInstanceOf(Outcome.Replayed.class).extracting(Outcome::value).isEqualTo("won");
        assertThat(store.committedWrites()).isEmpty();
        assertThat(runner.transactions).isEqualTo(1);
    }

    @Test
    void aBusyRefusalAtCommitIsInProgress() {
        runner.commitFailures.add(new LastWriteRefusedException(KEY, Claim.busy(), null));
        assertThat(managed(KeyPolicy.ofDefaults()).writeLast(KEY, tx -> work(tx, "mine"))).isEqualTo(new Outcome.InProgress<>(KEY));
        assertThat(store.committedWrites()).isEmpty();
    }

    @Test
    void aKeyHeldPastTheLockTimeoutIsInProgressAndTheWorkRolledBack() {
        store.busy.add(KEY);
        assertThat(managed(KeyPolicy.ofDefaults()).writeLast(KEY, tx -> work(tx, "mine"))).isEqualTo(new Outcome.InProgress<>(KEY));
        assertThat(runner.commits).isZero();
    }

    @Test
    void aFinalFailureRollsTheWorkBackAndIsRecordedInATransactionOfItsOwn() {
        ManagedIdempotency<FakeTx> managed = managed(KeyPolicy.builder().finalFailures(IllegalArgumentException.class).build());
        Outcome<String> failed = managed.writeLast(KEY, tx -> {
            tx.write("declined");
            throw new IllegalArgumentException("card declined");
        });
        assertThat(failed).isInstanceOfSatisfying(Outcome.Failed.class, f -> {
            assertThat(f.replayed()).isFalse();
            assertThat(f.errorMessage()).isEqualTo("card declined");
        });
        assertThat(runner.transactions).isEqualTo(2);
        assertThat(store.committedWrites()).isEmpty();
        assertThat(store.committed(KEY)).get().extracting(StoredRecord::status).isEqualTo(RecordStatus.FAILED);
        assertThat(managed.writeLast(KEY, tx -> work(tx, "again"))).isInstanceOfSatisfying(Outcome.Failed.class,
                f -> assertThat(f.replayed()).isTrue());
    }

    @Test
    void anInvalidKeyIsRefusedBeforeAnyTransaction() {
        ManagedIdempotency<FakeTx> managed = managed(KeyPolicy.builder().maxIdLength(1).build());
        assertThatThrownBy(() -> managed.writeLast(KEY, tx -> work(tx, "w"))).isInstanceOf(InvalidKeyException.class);
        assertThatThrownBy(() -> managed.writeLast((IdempotencyKey) null,
                tx -> "w")).isInstanceOf(NullPointerException.class).hasMessage("key");
        assertThat(runner.transactions).isZero();
    }

    @Test
    void aRefusalCarriesWhatHeldTheKeyNeverAnAcquiredClaim() {
        assertThatThrownBy(() -> new LastWriteRefusedException(KEY, Claim.acquired(), null)).isInstanceOf(IllegalArgumentException.class);
        assertThat(new LastWriteRefusedException(KEY, Claim.busy(), null).getMessage()).contains("lock timeout").contains("jobs");
    }
}
