package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.fake.FakeRunner;
import dev.idempotency.fake.FakeStore;
import dev.idempotency.fake.FakeTx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class BatchJobTest {

    final FakeStore store = new FakeStore();
    final FakeRunner runner = new FakeRunner(store);
    final ManagedIdempotency<FakeTx> managed = ManagedIdempotency.builder(
                    Idempotency.builder(store).keyPolicy(KeyPolicy.builder().finalFailures(IllegalArgumentException.class).build()).build(),
                    runner)
            .retryPolicy(RetryPolicy.builder().backoff(Duration.ZERO, Duration.ZERO).build()).build();
    final ResultCodec<Integer> codec = ResultCodec.of("n-v1", String::valueOf, Integer::valueOf);

    /** A job whose work refuses item 4 with a final failure, in chunks of 2. */
    BatchJob.Builder<FakeTx, Integer, Integer, RuntimeException> builder() {
        return builder(i -> Fingerprint.NONE);
    }

    /** As {@link #builder()}, each item with its fingerprint. */
    BatchJob.Builder<FakeTx, Integer, Integer, RuntimeException> builder(Function<Integer, Fingerprint> fingerprintOf) {
        return BatchJob.<FakeTx, Integer, Integer, RuntimeException>builder(managed,
                i -> IdempotentCall.of(IdempotencyKey.of("n" + i), codec).withFingerprint(fingerprintOf.apply(i)), (tx, i) -> {
            if (i == 4) {
                throw new IllegalArgumentException("four is refused");
            }
            tx.write("item " + i);
            return i * 10;
        }).chunkSize(2);
    }

    BatchJob<FakeTx, Integer, Integer, RuntimeException> job(List<JobProgress> seen) {
        return builder().listener(p -> {
            seen.add(p);
            throw new IllegalStateException("a failing progress listener is ignored");
        }).build();
    }

    @Test
    void itemsRunInChunksAndASecondRunExecutesNothing() {
        List<JobProgress> seen = new ArrayList<>();
        long started = System.nanoTime();
        JobProgress first = job(seen).process(Stream.of(1, 2, 3, 4, 5), 5).progress();
        Duration around = Duration.ofNanos(System.nanoTime() - started);
        assertThat(seen).extracting(JobProgress::elapsed).allSatisfy(elapsed -> assertThat(elapsed).isBetween(Duration.ZERO, around));
        assertThat(first.chunks()).isEqualTo(3);
        assertThat(first.executed()).isEqualTo(4);
        assertThat(first.failed()).isEqualTo(1);
        assertThat(first.total()).isEqualTo(5);
        assertThat(seen).extracting(JobProgress::done).containsExactly(2L, 4L, 5L);
        assertThat(runner.commits).isEqualTo(3);
        assertThat(store.committedWrites()).containsExactly("item 1", "item 2", "item 3", "item 5");

        seen.clear();
        JobProgress second = job(seen).process(List.of(1, 2, 3, 4, 5).iterator(), -1).progress();
        assertThat(second.nothingExecuted()).isTrue();
        assertThat(second.replayed()).isEqualTo(4);
        assertThat(second.failed()).isEqualTo(1);
        assertThat(second.total()).isEqualTo(-1);
        assertThat(second.held()).isZero();
        assertThat(second.mismatched()).isZero();
    }

    @Test
    void theResultNamesEachFailedHeldAndMismatchedItemByItsKey() {
        builder().build().process(Stream.of(1), 1); // n1 recorded without a fingerprint
        store.busy.add(IdempotencyKey.of("n5")); // held by another worker past the lock timeout
        BatchJob<FakeTx, Integer, Integer, RuntimeException> job =
                builder(i -> i == 1 ? Fingerprint.of("changed") : Fingerprint.NONE).build();

        JobResult<Integer> result = job.process(Stream.of(1, 2, 3, 4, 5, 6), 6);
        JobProgress p = result.progress();
        assertThat(p.executed()).isEqualTo(3);
        assertThat(p.replayed()).isZero();
        assertThat(p.failed()).isEqualTo(1);
        assertThat(p.held()).isEqualTo(1);
        assertThat(p.mismatched()).isEqualTo(1);
        assertThat(p.done()).isEqualTo(6);
        assertThat(result.failedItems()).singleElement().satisfies(failed -> {
            assertThat(failed.key()).isEqualTo(IdempotencyKey.of("n4"));
            assertThat(failed.errorType()).isEqualTo(IllegalArgumentException.class.getName());
            assertThat(failed.errorMessage()).isEqualTo("four is refused");
            assertThat(failed.replayed()).isFalse();
        });
        assertThat(result.heldItems()).extracting(Outcome::key).containsExactly(IdempotencyKey.of("n5"));
        assertThat(result.mismatchedItems()).extracting(Outcome::key).containsExactly(IdempotencyKey.of("n1"));
        assertThat(result.allListed()).isTrue();

        store.busy.clear();
        JobResult<Integer> rerun = job.process(Stream.of(1, 2, 3, 4, 5, 6), 6);
        assertThat(rerun.progress().executed()).as("the held item, run now").isEqualTo(1);
        assertThat(rerun.heldItems()).isEmpty();
        assertThat(rerun.failedItems()).singleElement().satisfies(failed -> {
            assertThat(failed.key()).isEqualTo(IdempotencyKey.of("n4"));
            assertThat(failed.replayed()).isTrue();
        });
        assertThat(rerun.mismatchedItems()).extracting(Outcome::key).containsExactly(IdempotencyKey.of("n1"));
    }

    @Test
    void atMostTheLimitOfEachKindIsListedWhileTheCountsStayWhole() {
        var everyEvenFails = BatchJob.<FakeTx, Integer, Integer, RuntimeException>builder(managed,
                i -> IdempotentCall.of(IdempotencyKey.of("n" + i), codec), (tx, i) -> {
                    if (i % 2 == 0) {
                        throw new IllegalArgumentException(i + " is even");
                    }
                    return i;
                }).chunkSize(3);
        JobResult<Integer> two = everyEvenFails.maxListedItems(2).build().process(Stream.of(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 10);
        assertThat(two.progress().failed()).isEqualTo(5);
        assertThat(two.failedItems()).extracting(Outcome::key).containsExactly(IdempotencyKey.of("n2"), IdempotencyKey.of("n4"));
        assertThat(two.allListed()).isFalse();

        JobResult<Integer> none = everyEvenFails.maxListedItems(0).build().process(Stream.of(1, 2), 2);
        assertThat(none.progress().failed()).isEqualTo(1);
        assertThat(none.failedItems()).isEmpty();
        assertThat(none.allListed()).isFalse();
        assertThat(BatchJob.DEFAULT_MAX_LISTED_ITEMS).isEqualTo(1_000);
        assertThatThrownBy(() -> everyEvenFails.maxListedItems(-1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("maxListedItems must be 0 or more, was -1");
    }

    @Test
    void anEmptyJobReportsNothingAndTheChunkSizeIsBounded() {
        JobResult<Integer> empty = job(new ArrayList<>()).process(List.<Integer>of().iterator(), 0);
        assertThat(empty.allListed()).isTrue();
        JobProgress none = empty.progress();
        assertThat(none.chunks()).isZero();
        assertThat(none.done()).isZero();
        var builder = BatchJob.<FakeTx, Integer, Integer, RuntimeException>builder(managed,
                i -> IdempotentCall.of(IdempotencyKey.of("n" + i), codec),
                (tx, i) -> i);
        builder.chunkSize(1).chunkSize(10_000);
        assertThatThrownBy(() -> builder.chunkSize(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> builder.chunkSize(10_001)).isInstanceOf(IllegalArgumentException.class);
        assertThat(BatchJob.DEFAULT_CHUNK_SIZE).isEqualTo(500);
    }
}
