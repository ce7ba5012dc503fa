package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.fake.FakeRunner;
import dev.idempotency.fake.FakeStore;
import dev.idempotency.fake.FakeTx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class BatchJobTest {

    final FakeStore store = new FakeStore();
    final FakeRunner runner = new FakeRunner(store);
    final ManagedIdempotency<FakeTx> managed = ManagedIdempotency.builder(
                    Idempotency.builder(store).keyPolicy(KeyPolicy.builder().finalFailures(IllegalArgumentException.class).build()).build(),
                    runner)
            .retry(RetryPolicy.builder().backoff(Duration.ZERO, Duration.ZERO).build()).build();
    final ResultCodec<Integer> codec = ResultCodec.of("n-v1", String::valueOf, Integer::valueOf);

    BatchJob<FakeTx, Integer, Integer, RuntimeException> job(List<JobProgress> seen) {
        return BatchJob.<FakeTx, Integer, Integer, RuntimeException>builder(managed, i -> IdempotencyKey.of("n" + i), codec, (tx, i) -> {
            if (i == 4) {
                throw new IllegalArgumentException("four is refused");
            }
            tx.write("item " + i);
            return i * 10;
        }).chunkSize(2).listener(p -> {
            seen.add(p);
            throw new IllegalStateException("a failing progress listener is ignored");
        }).build();
    }

    @Test
    void itemsRunInChunksAndASecondRunExecutesNothing() {
        List<JobProgress> seen = new ArrayList<>();
        long started = System.nanoTime();
        JobProgress first = job(seen).run(Stream.of(1, 2, 3, 4, 5), 5);
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
        JobProgress second = job(seen).run(List.of(1, 2, 3, 4, 5).iterator());
        assertThat(second.nothingExecuted()).isTrue();
        assertThat(second.replayed()).isEqualTo(4);
        assertThat(second.failed()).isEqualTo(1);
        assertThat(second.total()).isEqualTo(-1);
        assertThat(second.skipped()).isZero();
    }

    @Test
    void anItemWithAnotherFingerprintIsSkipped() {
        job(new ArrayList<>()).run(Stream.of(1), 1);
        JobProgress progress = BatchJob.<FakeTx, Integer, Integer, RuntimeException>builder(managed, i -> IdempotencyKey.of("n" + i),
                codec, (tx, i) -> i).fingerprint(i -> Fingerprint.of("other")).build().run(List.of(1).iterator());
        assertThat(progress.skipped()).isEqualTo(1);
        assertThat(progress.done()).isEqualTo(1);
    }

    @Test
    void anEmptyJobReportsNothingAndTheChunkSizeIsBounded() {
        JobProgress none = job(new ArrayList<>()).run(List.<Integer>of().iterator(), 0);
        assertThat(none.chunks()).isZero();
        assertThat(none.done()).isZero();
        var builder = BatchJob.<FakeTx, Integer, Integer, RuntimeException>builder(managed, i -> IdempotencyKey.of("n" + i), codec,
                (tx, i) -> i);
        builder.chunkSize(1).chunkSize(10_000);
        assertThatThrownBy(() -> builder.chunkSize(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> builder.chunkSize(10_001)).isInstanceOf(IllegalArgumentException.class);
        assertThat(BatchJob.DEFAULT_CHUNK_SIZE).isEqualTo(500);
    }
}
