package dev.idempotency;

import java.util.List;
import java.util.Objects;

/**
 * What a {@link BatchJob} run did: its final {@link JobProgress} (the counts of every item), and the
 * items that need a look, by key: those whose final failure is recorded, those held by another
 * worker, and those whose key was used with another fingerprint. Items executed or replayed are
 * counted, never listed, so the result stays small however many items the job has.
 *
 * <p>Each list holds, in input order, the first items of its kind, up to the job's
 * {@link BatchJob.Builder#maxListedItems limit} ({@value BatchJob#DEFAULT_MAX_LISTED_ITEMS} unless
 * set); the counts of {@link #progress()} are whole. {@link #allListed()} tells whether a list was
 * cut; raise the limit for a job whose failures are needed in full. Immutable and thread-safe.
 *
 * @param progress the counts, the rate and the duration of the run
 * @param failedItems items whose work failed with a final failure, now or in an earlier run: the key,
 *     the exception's class name and message as recorded, when, and whether it is a replay
 * @param heldItems items not run because another worker held their key past the lock timeout; a
 *     later run of the job runs them
 * @param mismatchedItems items not run because their key was recorded with another fingerprint
 * @param <T> the result type of the job
 */
public record JobResult<T>(JobProgress progress, List<Outcome.Failed<T>> failedItems, List<Outcome.InProgress<T>> heldItems,
                           List<Outcome.Mismatch<T>> mismatchedItems) {

    /**
     * @param progress the counts, the rate and the duration of the run
     * @param failedItems the first items whose final failure is recorded
     * @param heldItems the first items held by another worker
     * @param mismatchedItems the first items recorded with another fingerprint
     * @throws NullPointerException if an argument or an element of a list is null
     */
    public JobResult {
        Objects.requireNonNull(progress, "progress");
        failedItems = List.copyOf(failedItems);
        heldItems = List.copyOf(heldItems);
        mismatchedItems = List.copyOf(mismatchedItems);
    }

    /**
     * @return whether every failed, held and mismatched item of the run is listed (no list was cut
     *     by the limit)
     */
    public boolean allListed() {
        return failedItems.size() == progress.failed() && heldItems.size() == progress.held()
                && mismatchedItems.size() == progress.mismatched();
    }
}
