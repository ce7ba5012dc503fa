package dev.idempotency.testkit;

import dev.idempotency.IdempotencyKey;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

/**
 * What CONTRACT section 3 says a store holds after a sequence of single-transaction attempts: per
 * key, the last committed record (expired ones included, until purged), and why a key has none.
 * Also remembers where every value came from, so that a wrong replay can be traced to the promise
 * it breaks.
 */
final class Model {

    /** A committed record. {@code value} is the result, or the failure's message if {@code failed}. */
    record Rec(int fingerprint, boolean failed, String value, Instant expiresAt, int step) {
    }

    /** Where a value (or a failure message) was produced. */
    record Origin(int step, IdempotencyKey key, boolean committed) {
    }

    /** What an attempt must see. {@code runReason} says which promise makes the work run. */
    record Expectation(Rec record, Promise expected, Promise runReason) {
        boolean runs() {
            return record == null;
        }
    }

    private final Duration retention;
    private final Map<IdempotencyKey, Rec> records = new HashMap<>();
    private final Map<IdempotencyKey, Promise> whyAbsent = new HashMap<>();
    private final Map<String, Origin> origins = new HashMap<>();

    Model(Duration retention) {
        this.retention = retention;
    }

    Expectation expect(IdempotencyKey key, int fingerprint, Instant now) {
        Rec r = records.get(key);
        if (r != null && r.expiresAt().isAfter(now)) {
            Promise p = r.fingerprint() != fingerprint ? Promise.MISMATCH : r.failed() ? Promise.FINAL_FAILURE : Promise.REPLAY;
            return new Expectation(r, p, null);
        }
        Promise reason = r != null ? Promise.EXPIRY : whyAbsent.getOrDefault(key, siblingPromise(key, now));
        return new Expectation(null, null, reason);
    }

    /** A promise that explains a key having no record: another key with a similar name has one. */
    private Promise siblingPromise(IdempotencyKey key, Instant now) {
        for (Map.Entry<IdempotencyKey, Rec> e : records.entrySet()) {
            IdempotencyKey other = e.getKey();
            if (!other.equals(key) && e.getValue().expiresAt().isAfter(now)) {
                if (other.scope().equals(key.scope()) && other.id().equalsIgnoreCase(key.id())) {
                    return Promise.EXACT_KEYS;
                }
                if (other.id().equals(key.id())) {
                    return Promise.SCOPE;
                }
            }
        }
        return Promise.ROLLBACK;
    }

    /**
     * Which promise a replay of {@code value} for {@code key} breaks, judging by where the value came from.
     *
     * @return the promise, or {@code null} if the value's origin is unknown
     */
    Promise diagnose(IdempotencyKey key, String value, Instant now) {
        Origin o = origins.get(value);
        if (o == null) {
            return null;
        }
        if (!o.key().equals(key)) {
            return o.key().scope().equals(key.scope()) ? Promise.EXACT_KEYS : Promise.SCOPE;
        }
        if (!o.committed()) {
            return Promise.ROLLBACK;
        }
        Rec r = records.get(key);
        if (r == null || r.step() != o.step()) {
            return Promise.EXPIRY;
        }
        return null;
    }

    void origin(String value, int step, IdempotencyKey key, boolean committed) {
        origins.put(value, new Origin(step, key, committed));
    }

    void committed(IdempotencyKey key, int fingerprint, boolean failed, String value, Instant completedAt, int step) {
        records.put(key, new Rec(fingerprint, failed, value, completedAt.plus(retention), step));
        whyAbsent.remove(key);
    }

    void rolledBack(IdempotencyKey key, Promise reason) {
        if (!records.containsKey(key)) {
            whyAbsent.put(key, reason);
        }
    }

    int expired(Instant now) {
        int n = 0;
        for (Rec r : records.values()) {
            if (!r.expiresAt().isAfter(now)) {
                n++;
            }
        }
        return n;
    }

    void purge(Instant now) {
        records.entrySet().removeIf(e -> {
            if (!e.getValue().expiresAt().isAfter(now)) {
                whyAbsent.put(e.getKey(), Promise.EXPIRY);
                return true;
            }
            return false;
        });
    }
}
