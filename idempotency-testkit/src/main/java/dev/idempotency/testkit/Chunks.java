package dev.idempotency.testkit;

import static dev.idempotency.testkit.StoreFixture.describe;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.ItemWork;
import dev.idempotency.Outcome;
import dev.idempotency.ResultCodec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/** The items of a chunk and their work, shared by the chunk examples and the chunk property. */
final class Chunks {

    /** An item of a chunk: its key, its request fingerprint, and what its work returns. */
    record Item(IdempotencyKey key, Fingerprint fingerprint, String value) {
        IdempotentCall<String> call() {
            return IdempotentCall.of(key, ResultCodec.string()).withFingerprint(fingerprint);
        }

        @Override
        public String toString() {
            return key.scope() + "/" + key.id();
        }
    }

    /** Item work that returns the item's value and counts the runs per key id. */
    static final class ItemRuns implements ItemWork<Item, String, RuntimeException> {
        final Map<String, Integer> runs = new java.util.concurrent.ConcurrentHashMap<>();

        @Override
        public String apply(Item item) {
            runs.merge(item.key().id(), 1, Integer::sum);
            return item.value();
        }

        int of(String id) {
            return runs.getOrDefault(id, 0);
        }

        int total() {
            return runs.values().stream().mapToInt(Integer::intValue).sum();
        }

        @Override
        public String toString() {
            return "runs per key " + runs;
        }
    }

    /** Items of one scope and fingerprint, in the order given, each returning {@code prefix + id}. */
    static List<Item> items(String scope, Fingerprint fp, String prefix, String... ids) {
        List<Item> items = new ArrayList<>(ids.length);
        for (String id : ids) {
            items.add(new Item(IdempotencyKey.of(scope, id), fp, prefix + id));
        }
        return items;
    }

    /** The described outcomes {@code STATUS(prefix + id)}, one per id, in order. */
    static String[] expected(String status, String prefix, String... ids) {
        return Arrays.stream(ids).map(id -> status + "(" + prefix + id + ")").toArray(String[]::new);
    }

    static void assertChunk(Promise promise, String what, List<Outcome<String>> outcomes, String... expected) {
        List<String> seen = outcomes.stream().map(StoreFixture::describe).toList();
        assertThat(seen).as(promise.broken(what + ": expected the outcomes " + List.of(expected) + ", in input order; got " + seen))
                .containsExactly(expected);
    }
}
