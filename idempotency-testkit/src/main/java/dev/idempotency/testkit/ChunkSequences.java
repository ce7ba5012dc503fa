package dev.idempotency.testkit;

import static dev.idempotency.testkit.StoreFixture.A;
import static dev.idempotency.testkit.StoreFixture.B;
import static dev.idempotency.testkit.StoreFixture.RETENTION;
import static dev.idempotency.testkit.StoreFixture.describe;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.Outcome;
import dev.idempotency.testkit.Chunks.Item;
import dev.idempotency.testkit.Chunks.ItemRuns;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.quicktheories.core.Gen;

/**
 * The chunk property of {@link ChunkContract}: random sequences of chunks and clock moves, every
 * outcome compared with a model of the chunk's records.
 *
 * @param <C> the store's transaction type
 */
final class ChunkSequences<C> {

    private final StoreFixture<C> f;

    ChunkSequences(StoreFixture<C> f) {
        this.f = f;
    }

    /** Keys that differ by the case of the id, by the scope, by the case of the scope, and by the id. */
    private static final List<IdempotencyKey> CHUNK_KEYS = List.of(IdempotencyKey.of("chunks", "k1"), IdempotencyKey.of("chunks", "K1"),
            IdempotencyKey.of("chunks-2", "k1"), IdempotencyKey.of("CHUNKS", "k1"), IdempotencyKey.of("chunks", "k2"));

    /** A step of a chunk sequence: a chunk of {@code items} (committed or not), or a clock move by {@code advance}. */
    record ChunkStep(List<Item> items, boolean commit, Duration advance) {
        @Override
        public String toString() {
            if (advance != null) {
                return "advance the clock by " + Operations.duration(advance);
            }
            StringBuilder s = new StringBuilder("chunk [");
            for (Item item : items) {
                s.append(s.length() > 7 ? ", " : "").append(item).append(item.fingerprint().equals(A) ? " A" : " B");
            }
            return s.append("] then ").append(commit ? "commit" : "roll back").toString();
        }
    }

    /** Chunks (3 in 4) of 1 to 4 distinct keys in a random order, each item with fingerprint A or B; clock moves (1 in 4). */
    static Gen<List<ChunkStep>> sequences() {
        Gen<ChunkStep> step = integers().between(0, 7).zip(integers().between(0, Integer.MAX_VALUE), (kind, r) -> {
            if (kind >= 6) {
                Duration[] moves = {Duration.ofMillis(1), RETENTION.dividedBy(2), RETENTION.minusMillis(1), RETENTION};
                return new ChunkStep(null, false, moves[r % moves.length]);
            }
            List<IdempotencyKey> keys = new ArrayList<>(CHUNK_KEYS);
            java.util.Collections.shuffle(keys, new java.util.Random(r));
            int size = 1 + (r >>> 3) % keys.size();
            List<Item> items = new ArrayList<>(size);
            for (int i = 0; i < size; i++) {
                items.add(new Item(keys.get(i), ((r >>> (8 + i)) & 3) == 0 ? B : A, "v" + (r % 1000) + "-" + i));
            }
            return new ChunkStep(items, ((r >>> 16) & 3) != 0, null);
        });
        return lists().of(step).ofSizeBetween(1, 8);
    }

    /** What a committed chunk recorded for a key, in the chunk model. */
    private record ChunkRecord(Fingerprint fingerprint, String value, Instant expiresAt) {
    }

    /** @return the first promise the steps break, or {@code null} */
    AssertionError firstBroken(List<ChunkStep> steps) {
        try {
            runChunks(steps);
            return null;
        } catch (AssertionError e) {
            return e;
        }
    }

    private void runChunks(List<ChunkStep> steps) {
        try {
            f.clean();
        } catch (Exception e) {
            throw new AssertionError("could not empty the store before a sequence: " + e, e);
        }
        Map<IdempotencyKey, ChunkRecord> model = new HashMap<>();
        List<ChunkStep> all = new ArrayList<>(steps);
        List<Item> everyKey = new ArrayList<>();
        for (IdempotencyKey key : CHUNK_KEYS) {
            everyKey.add(new Item(key, A, "final-" + key.id()));
        }
        all.add(new ChunkStep(everyKey, false, null));
        for (int i = 0; i < all.size(); i++) {
            ChunkStep step = all.get(i);
            if (step.advance() != null) {
                f.clock.advance(step.advance());
                continue;
            }
            Instant now = f.clock.instant();
            List<String> expected = new ArrayList<>();
            Map<IdempotencyKey, ChunkRecord> written = new HashMap<>();
            for (Item item : step.items()) {
                ChunkRecord rec = model.get(item.key());
                if (rec != null && rec.expiresAt().isAfter(now)) {
                    expected.add(rec.fingerprint().equals(item.fingerprint()) ? "REPLAYED(" + rec.value() + ")" : "MISMATCH");
                } else {
                    expected.add("EXECUTED(" + item.value() + ")");
                    written.put(item.key(), new ChunkRecord(item.fingerprint(), item.value(), now.plus(RETENTION)));
                }
            }
            List<Outcome<String>> outcomes;
            try {
                outcomes = f.chunkInTx(Promise.CHUNK_OUTCOMES, step.items(), new ItemRuns(), step.commit());
            } catch (AssertionError e) {
                throw chunkFailure(all, i, e.getMessage(), e.getCause());
            } catch (Exception e) {
                throw chunkFailure(all, i, Promise.CHUNK_OUTCOMES.broken("executeChunk threw " + e), e);
            }
            List<String> seen = outcomes.stream().map(StoreFixture::describe).toList();
            if (!seen.equals(expected)) {
                throw chunkFailure(all, i, Promise.CHUNK_OUTCOMES.broken("Expected the outcomes " + expected + ", in input order; got " + seen),
                        null);
            }
            if (step.commit()) {
                model.putAll(written);
            }
        }
    }

    private static AssertionError chunkFailure(List<ChunkStep> steps, int failed, String message, Throwable cause) {
        StringBuilder s = new StringBuilder(message).append("\nAt step ").append(failed + 1).append(" of:");
        for (int i = 0; i < steps.size(); i++) {
            s.append("\n  ").append(i + 1).append(". ").append(steps.get(i));
            if (i == steps.size() - 1) {
                s.append(" (the kit's final read of every key)");
            }
        }
        return new AssertionError(s.toString(), cause);
    }
}
