package dev.idempotency;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A batch job of keyed items that survives a crash and a rerun: items are taken in chunks, each
 * chunk runs in one transaction of the library's own ({@link ManagedIdempotency#executeChunk}:
 * one claim and one batched recording per chunk, conflicts retried whole), and an item recorded by
 * an earlier run is replayed without running. A job killed at any point and run again executes
 * each item exactly once in total; a finished job run again executes nothing, and says so.
 *
 * <p>Keys of a job that may be rerun the next day must outlive that: give the job an engine whose
 * key policy keeps records for days ({@code KeyPolicy.builder().retention(Duration.ofDays(7))}).
 *
 * <p>Progress reaches a listener after every committed chunk. Immutable and thread-safe; one
 * {@link #run} at a time per iterator.
 *
 * @param <C> the transaction type
 * @param <I> the item type
 * @param <T> the result type
 * @param <X> the work's checked exception
 */
public final class BatchJob<C, I, T, X extends Exception> {

    private static final Logger log = LoggerFactory.getLogger(BatchJob.class);

    /** Items per chunk unless set: 500. */
    public static final int DEFAULT_CHUNK_SIZE = 500;

    private final ManagedIdempotency<C> managed;
    private final Function<? super I, IdempotencyKey> keyOf;
    private final Function<? super I, Fingerprint> fingerprintOf;
    private final ResultCodec<T> codec;
    private final ChunkWork<C, ? super I, T, X> work;
    private final int chunkSize;
    private final Consumer<? super JobProgress> listener;

    private BatchJob(Builder<C, I, T, X> b) {
        this.managed = b.managed;
        this.keyOf = b.keyOf;
        this.fingerprintOf = b.fingerprintOf;
        this.codec = b.codec;
        this.work = b.work;
        this.chunkSize = b.chunkSize;
        this.listener = b.listener;
    }

    /**
     * @param managed the engine and the transactions (its key policy's retention should be days)
     * @param keyOf the key of an item
     * @param codec encodes each result
     * @param work the business change for one item, given the chunk's transaction
     * @param <C> the transaction type
     * @param <I> the item type
     * @param <T> the result type
     * @param <X> the work's checked exception
     * @return a builder with chunks of {@value #DEFAULT_CHUNK_SIZE} and no listener
     */
    public static <C, I, T, X extends Exception> Builder<C, I, T, X> builder(ManagedIdempotency<C> managed,
            Function<? super I, IdempotencyKey> keyOf, ResultCodec<T> codec, ChunkWork<C, ? super I, T, X> work) {
        return new Builder<>(managed, keyOf, codec, work);
    }

    /**
     * Runs the job over {@code items}, whose number is unknown.
     *
     * @param items the items, taken in order
     * @return the final progress: counts by outcome, rate, duration
     * @throws X an item's own exception, unchanged: its chunk was rolled back, earlier chunks stay
     *     committed, and a rerun resumes after them
     * @throws IdempotencyException as {@link ManagedIdempotency#executeChunk} does
     */
    public JobProgress run(Iterator<? extends I> items) throws X {
        return run(items, -1);
    }

    /**
     * Runs the job over a stream of {@code total} items (-1 if unknown), closing the stream.
     *
     * @param items the items
     * @param total how many there are, for the time left; -1 if unknown
     * @return the final progress
     * @throws X an item's own exception, unchanged
     */
    public JobProgress run(Stream<? extends I> items, long total) throws X {
        try (items) {
            return run(items.iterator(), total);
        }
    }

    /**
     * Runs the job over {@code items}, of which there are {@code total} (-1 if unknown).
     *
     * @param items the items, taken in order
     * @param total how many there are, for the time left; -1 if unknown
     * @return the final progress
     * @throws X an item's own exception, unchanged
     */
    public JobProgress run(Iterator<? extends I> items, long total) throws X {
        Objects.requireNonNull(items, "items");
        long started = System.nanoTime();
        long chunks = 0;
        long executed = 0;
        long replayed = 0;
        long failed = 0;
        long skipped = 0;
        List<I> chunk = new ArrayList<>(chunkSize);
        JobProgress progress = new JobProgress(0, 0, 0, 0, 0, total, Duration.ZERO);
        while (items.hasNext()) {
            chunk.clear();
            while (chunk.size() < chunkSize && items.hasNext()) {
                chunk.add(items.next());
            }
            for (Outcome<T> outcome : managed.executeChunk(chunk, keyOf, fingerprintOf, codec, work)) {
                switch (outcome.status()) {
                    case EXECUTED:
                        executed++;
                        break;
                    case REPLAYED:
                        replayed++;
                        break;
                    case FAILED:
                        failed++;
                        break;
                    default:
                        skipped++;
                }
            }
            chunks++;
            progress = new JobProgress(chunks, executed, replayed, failed, skipped, total, Duration.ofNanos(System.nanoTime() - started));
            try {
                listener.accept(progress);
            } catch (RuntimeException e) {
                log.warn("The job's progress listener failed; ignored", e);
            }
        }
        if (progress.nothingExecuted() && progress.done() > 0) {
            log.info("Nothing executed: all {} items were recorded before", progress.done());
        } else {
            log.info("Job done: {}", progress);
        }
        return progress;
    }

    /**
     * Builds a {@link BatchJob}. Not thread-safe; the job it builds is.
     *
     * @param <C> the transaction type
     * @param <I> the item type
     * @param <T> the result type
     * @param <X> the work's checked exception
     */
    public static final class Builder<C, I, T, X extends Exception> {
        private final ManagedIdempotency<C> managed;
        private final Function<? super I, IdempotencyKey> keyOf;
        private final ResultCodec<T> codec;
        private final ChunkWork<C, ? super I, T, X> work;
        private Function<? super I, Fingerprint> fingerprintOf = item -> Fingerprint.NONE;
        private int chunkSize = DEFAULT_CHUNK_SIZE;
        private Consumer<? super JobProgress> listener = progress -> { };

        private Builder(ManagedIdempotency<C> managed, Function<? super I, IdempotencyKey> keyOf, ResultCodec<T> codec,
                        ChunkWork<C, ? super I, T, X> work) {
            this.managed = Objects.requireNonNull(managed, "managed");
            this.keyOf = Objects.requireNonNull(keyOf, "keyOf");
            this.codec = Objects.requireNonNull(codec, "codec");
            this.work = Objects.requireNonNull(work, "work");
        }

        /**
         * @param chunkSize items per transaction: 1 to 10,000
         * @return this builder
         * @throws IllegalArgumentException naming the field if out of range
         */
        public Builder<C, I, T, X> chunkSize(int chunkSize) {
            if (chunkSize < 1 || chunkSize > 10_000) {
                throw new IllegalArgumentException("chunkSize must be between 1 and 10000, was " + chunkSize);
            }
            this.chunkSize = chunkSize;
            return this;
        }

        /**
         * @param fingerprintOf the request fingerprint of an item
         * @return this builder
         */
        public Builder<C, I, T, X> fingerprint(Function<? super I, Fingerprint> fingerprintOf) {
            this.fingerprintOf = Objects.requireNonNull(fingerprintOf, "fingerprintOf");
            return this;
        }

        /**
         * @param listener told the progress after every committed chunk, on the job's thread; a
         *     listener that throws is logged and ignored
         * @return this builder
         */
        public Builder<C, I, T, X> listener(Consumer<? super JobProgress> listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /** @return the job */
        public BatchJob<C, I, T, X> build() {
            return new BatchJob<>(this);
        }
    }
}
