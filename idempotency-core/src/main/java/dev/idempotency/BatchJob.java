package dev.idempotency;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
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
 * <p>The work is a {@link ChunkWork}: it is given the chunk's transaction, which the library begins,
 * commits and retries. To run a chunk in a transaction of your own, use
 * {@link Idempotency#executeChunk(Object, List, Function, ItemWork)} with an
 * {@link ItemWork} instead.
 *
 * <p>Progress, a {@link JobProgress} of counts, reaches a listener ({@code Consumer<JobProgress>})
 * after every committed chunk; the engine's {@link IdempotencyListener} hears each item's outcome
 * after its chunk's commit. The run answers a {@link JobResult}: the final counts, and by key the
 * items that failed, were held by another worker or mismatched (up to
 * {@link Builder#maxListedItems} of each kind, so that a huge job's result stays bounded). Immutable
 * and thread-safe; one {@link #process} call at a time per iterator.
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

    /** Items of each kind (failed, held, mismatched) listed in a {@link JobResult} unless set: 1,000. */
    public static final int DEFAULT_MAX_LISTED_ITEMS = 1_000;

    private final ManagedIdempotency<C> managed;
    private final Function<? super I, IdempotentCall<T>> callOf;
    private final ChunkWork<C, ? super I, T, X> work;
    private final int chunkSize;
    private final Consumer<? super JobProgress> listener;
    private final int maxListedItems;

    private BatchJob(Builder<C, I, T, X> b) {
        this.managed = b.managed;
        this.callOf = b.callOf;
        this.work = b.work;
        this.chunkSize = b.chunkSize;
        this.listener = b.listener;
        this.maxListedItems = b.maxListedItems;
    }

    /**
     * @param managed the engine and the transactions (its key policy's retention should be days)
     * @param callOf the call of an item: its key, its fingerprint (or none) and its codec (or none,
     *     to choose a built-in one by the result's type), e.g.
     *     {@code payment -> IdempotentCall.of(payment.key(), receiptCodec)}
     * @param work the business change for one item, given the chunk's transaction
     * @param <C> the transaction type
     * @param <I> the item type
     * @param <T> the result type
     * @param <X> the work's checked exception
     * @return a builder with chunks of {@value #DEFAULT_CHUNK_SIZE}, no listener, and up to
     *     {@value #DEFAULT_MAX_LISTED_ITEMS} items of each kind listed
     */
    public static <C, I, T, X extends Exception> Builder<C, I, T, X> builder(ManagedIdempotency<C> managed,
            Function<? super I, IdempotentCall<T>> callOf, ChunkWork<C, ? super I, T, X> work) {
        return new Builder<>(managed, callOf, work);
    }

    /**
     * Runs the job over a stream of {@code total} items (-1 if unknown), closing the stream.
     *
     * @param items the items
     * @param total how many there are, for the time left; -1 if unknown
     * @return the final progress and the failed, held and mismatched items
     * @throws X an item's own exception, unchanged
     * @throws IdempotencyException as {@link ManagedIdempotency#executeChunk} does
     */
    public JobResult<T> process(Stream<? extends I> items, long total) throws X {
        try (items) {
            return process(items.iterator(), total);
        }
    }

    /**
     * Runs the job over {@code items}, of which there are {@code total} (-1 if unknown).
     *
     * @param items the items, taken in order
     * @param total how many there are, for the time left; -1 if unknown
     * @return the final progress and the failed, held and mismatched items
     * @throws X an item's own exception, unchanged
     * @throws IdempotencyException as {@link ManagedIdempotency#executeChunk} does
     */
    public JobResult<T> process(Iterator<? extends I> items, long total) throws X {
        Objects.requireNonNull(items, "items");
        long started = System.nanoTime();
        long chunks = 0;
        long executed = 0;
        long replayed = 0;
        List<Outcome.Failed<T>> failed = new ArrayList<>();
        List<Outcome.InProgress<T>> held = new ArrayList<>();
        List<Outcome.Mismatch<T>> mismatched = new ArrayList<>();
        long failedCount = 0;
        long heldCount = 0;
        long mismatchedCount = 0;
        List<I> chunk = new ArrayList<>(chunkSize);
        JobProgress progress = new JobProgress(0, 0, 0, 0, 0, 0, total, Duration.ZERO);
        while (items.hasNext()) {
            chunk.clear();
            while (chunk.size() < chunkSize && items.hasNext()) {
                chunk.add(items.next());
            }
            for (Outcome<T> outcome : managed.executeChunk(chunk, callOf, work)) {
                switch (outcome.status()) {
                    case EXECUTED:
                        executed++;
                        break;
                    case REPLAYED:
                        replayed++;
                        break;
                    case FAILED:
                        failedCount++;
                        list(failed, (Outcome.Failed<T>) outcome);
                        break;
                    case IN_PROGRESS:
                        heldCount++;
                        list(held, (Outcome.InProgress<T>) outcome);
                        break;
                    case MISMATCH:
                        mismatchedCount++;
                        list(mismatched, (Outcome.Mismatch<T>) outcome);
                }
            }
            chunks++;
            progress = new JobProgress(chunks, executed, replayed, failedCount, heldCount, mismatchedCount, total,
                    Duration.ofNanos(System.nanoTime() - started));
            try {
                listener.accept(progress);
            } catch (RuntimeException e) {
                log.warn("The job's progress listener failed; ignored", e);
            }
        }
        if (progress.nothingExecuted() && progress.held() == 0 && progress.done() > 0) {
            log.info("Nothing executed: all {} items were recorded before", progress.done());
        } else {
            log.info("Job done: {}", progress);
        }
        return new JobResult<>(progress, failed, held, mismatched);
    }

    private <O> void list(Collection<O> listed, O outcome) {
        if (listed.size() < maxListedItems) {
            listed.add(outcome);
        }
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
        private final Function<? super I, IdempotentCall<T>> callOf;
        private final ChunkWork<C, ? super I, T, X> work;
        private int chunkSize = DEFAULT_CHUNK_SIZE;
        private Consumer<? super JobProgress> listener = progress -> { };
        private int maxListedItems = DEFAULT_MAX_LISTED_ITEMS;

        private Builder(ManagedIdempotency<C> managed, Function<? super I, IdempotentCall<T>> callOf,
                        ChunkWork<C, ? super I, T, X> work) {
            this.managed = Objects.requireNonNull(managed, "managed");
            this.callOf = Objects.requireNonNull(callOf, "callOf");
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
         * @param listener told the progress after every committed chunk, on the job's thread; a
         *     listener that throws is logged and ignored
         * @return this builder
         */
        public Builder<C, I, T, X> listener(Consumer<? super JobProgress> listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * Bounds the job's {@link JobResult}: at most this many failed items, as many held and as
         * many mismatched are listed, the first of each kind in input order; the counts stay whole.
         * Each listed item keeps its key and, for a failure, the recorded exception's class name and
         * message (within the key policy's result size limit): the result's memory grows with this
         * limit, never with the number of items.
         *
         * @param maxListedItems 0 (list none) or more; {@link Integer#MAX_VALUE} lists every one
         * @return this builder
         * @throws IllegalArgumentException naming the field if negative
         */
        public Builder<C, I, T, X> maxListedItems(int maxListedItems) {
            if (maxListedItems < 0) {
                throw new IllegalArgumentException("maxListedItems must be 0 or more, was " + maxListedItems);
            }
            this.maxListedItems = maxListedItems;
            return this;
        }

        /** @return the job */
        public BatchJob<C, I, T, X> build() {
            return new BatchJob<>(this);
        }
    }
}
