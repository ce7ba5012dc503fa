package dev.idempotency.testkit;

import dev.idempotency.IdempotencyKey;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

/**
 * What section 3 of docs/contract.md says a store holds after a sequence of single-transaction
 * attempts: per key, the last committed record (expired ones included, until purged), and why a key
 * has none. Also remembers where every value came from, so that a wrong replay can be traced to the
 * promise it breaks.
 *
 * <p>For lease mode (docs/contract.md, section 4) it keeps, per key name, the committed lease
 * record: its fingerprint, owner token, attempts, recovery point, result once completed, and
 * whether its lease is live, may have ended (a short lease, which a database's clock ends on its
 * own), or has surely ended (let run out, or released). It also remembers the values that fenced
 * writes were refused, to tell a fencing failure from others.
 */
final class Model {

    /**
     * A committed record. {@code value} is the result's label ({@link Results#label(Object)}), or the
     * failure's message if {@code failed}; {@code custom} if it was recorded with the custom codec.
     */
    record Rec(int fingerprint, boolean failed, String value, Instant expiresAt, int step, boolean custom, Instant claimedAt,
               Instant completedAt) {
        /** @return whether this is a claim committed without its result: in progress, until it expires */
        boolean inProgress() {
            return completedAt == null;
        }
    }

    /** Where a value (or a failure message) was produced. */
    record Origin(int step, IdempotencyKey key, boolean committed) {
    }

    /**
     * What an attempt with fingerprint {@code asked} must see. {@code runReason} says which promise
     * makes the work run.
     */
    record Expectation(Rec record, Promise expected, Promise runReason, int asked) {
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
            Promise p = r.inProgress() ? Promise.MISMATCH_IN_PROGRESS : r.fingerprint() != fingerprint ? Promise.MISMATCH
                    : r.failed() ? Promise.FINAL_FAILURE : Promise.REPLAY;
            return new Expectation(r, p, null, fingerprint);
        }
        Promise reason = r != null ? Promise.EXPIRY : whyAbsent.getOrDefault(key, siblingPromise(key, now));
        return new Expectation(null, null, reason, fingerprint);
    }

    /** A promise that explains a key having no record: another key with a similar name has one. */
    private Promise siblingPromise(IdempotencyKey key, Instant now) {
        for (Map.Entry<IdempotencyKey, Rec> e : records.entrySet()) {
            IdempotencyKey other = e.getKey();
            if (!other.equals(key) && e.getValue().expiresAt().isAfter(now)) {
                Promise p = confusion(key, other);
                if (p != null) {
                    return p;
                }
            }
        }
        return Promise.ROLLBACK;
    }

    /**
     * @return the promise a store breaks that takes {@code key} for {@code other}: they differ only in
     *     case (scope or id), only in scope, or are keys of the largest size that differ in one
     *     character; {@code null} if none of these
     */
    static Promise confusion(IdempotencyKey key, IdempotencyKey other) {
        if (other.scope().equalsIgnoreCase(key.scope()) && other.id().equalsIgnoreCase(key.id())) {
            return Promise.EXACT_KEYS;
        }
        if (other.id().equals(key.id())) {
            return Promise.SCOPE;
        }
        if (other.scope().equals(key.scope()) && other.id().length() == key.id().length() && key.id().length() > 1) {
            return Promise.KEY_LIMITS;
        }
        return null;
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
            Promise p = confusion(key, o.key());
            return p != null ? p : Promise.SCOPE;
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

    void committed(IdempotencyKey key, int fingerprint, boolean failed, String value, Instant claimedAt, Instant completedAt, int step,
                   boolean custom) {
        records.put(key, new Rec(fingerprint, failed, value, completedAt.plus(retention), step, custom, claimedAt, completedAt));
        whyAbsent.remove(key);
    }

    /** A claim committed without its result: in progress until its retention, counted from the claim, runs out. */
    void committedInProgress(IdempotencyKey key, int fingerprint, Instant claimedAt, int step) {
        records.put(key, new Rec(fingerprint, false, null, claimedAt.plus(retention), step, false, claimedAt, null));
        whyAbsent.remove(key);
    }

    /** @return the key's committed record, expired or not, until purged; {@code null} if none */
    Rec record(IdempotencyKey key) {
        return records.get(key);
    }

    void rolledBack(IdempotencyKey key, Promise reason) {
        if (!records.containsKey(key)) {
            whyAbsent.put(key, reason);
        }
    }

    int expired(Instant now) {
        return expired(now, null);
    }

    /** @return how many records have expired at {@code now}, not counting {@code except}'s */
    int expired(Instant now, IdempotencyKey except) {
        int n = 0;
        for (Map.Entry<IdempotencyKey, Rec> e : records.entrySet()) {
            if (!e.getKey().equals(except) && !e.getValue().expiresAt().isAfter(now)) {
                n++;
            }
        }
        return n;
    }

    /** A purge in the transaction that claimed {@code except}, committed: as {@link #purge(Instant)}, but its claim replaced its record. */
    void purge(Instant now, IdempotencyKey except) {
        records.entrySet().removeIf(e -> {
            if (!e.getKey().equals(except) && !e.getValue().expiresAt().isAfter(now)) {
                whyAbsent.put(e.getKey(), Promise.EXPIRY);
                return true;
            }
            return false;
        });
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

    // ---- lease mode ---------------------------------------------------------------------------------

    /** Whether a lease can still block a claim. */
    enum LeaseEnd {
        /** A long lease: a claim must find it Held. */
        LIVE,
        /** A short lease not yet let run out: by a database's clock it may have ended, by the kit's it has not. */
        MAYBE_ENDED,
        /** Let run out, or released: a claim with the same fingerprint must take it over. */
        ENDED
    }

    /** What last set the end of a lease, to name the promise a wrong end breaks. */
    enum EndSetBy {
        CLAIM, EXTEND, RELEASE
    }

    /** A committed lease record. {@code leaseUntil} is {@code null} when the store's answer did not tell it (after a release). */
    record Lease(int fingerprint, String owner, int attempts, String point, Instant leaseUntil, LeaseEnd end, EndSetBy setBy,
                 boolean done, boolean failed, String result) {

        Lease withEnd(Instant until, LeaseEnd newEnd, EndSetBy by) {
            return new Lease(fingerprint, owner, attempts, point, until, newEnd, by, done, failed, result);
        }
    }

    /** What a lease claim must answer. */
    enum ClaimExpectation {
        /** Acquired as attempt 1 without a recovery point. */
        NEW,
        /** Existing, with the recorded result. */
        FOUND,
        /** Held: another fingerprint holds the record. */
        HELD_MISMATCH,
        /** Held: the lease is live. */
        HELD_LIVE,
        /** Acquired as the next attempt, with the recovery point. */
        TAKE_OVER,
        /** Held as for {@link #HELD_LIVE}, or Acquired as for {@link #TAKE_OVER}: the short lease may have ended. */
        HELD_OR_TAKE_OVER
    }

    private final Map<String, Lease> leases = new HashMap<>();
    private final Map<String, Promise> refused = new HashMap<>();

    /** @return the committed lease record of the key, or {@code null} */
    Lease lease(String key) {
        return leases.get(key);
    }

    ClaimExpectation expectClaim(String key, int fingerprint) {
        Lease l = leases.get(key);
        if (l == null) {
            return ClaimExpectation.NEW;
        }
        if (l.done()) {
            return ClaimExpectation.FOUND;
        }
        if (l.fingerprint() != fingerprint) {
            return ClaimExpectation.HELD_MISMATCH;
        }
        switch (l.end()) {
            case LIVE:
                return ClaimExpectation.HELD_LIVE;
            case ENDED:
                return ClaimExpectation.TAKE_OVER;
            default:
                return ClaimExpectation.HELD_OR_TAKE_OVER;
        }
    }

    /** A committed claim that acquired the key: a new record, or a take-over that keeps the recovery point. */
    void leaseClaimed(String key, int fingerprint, String token, int attempt, Instant leaseUntil, boolean live) {
        Lease l = leases.get(key);
        String point = l == null ? null : l.point();
        leases.put(key, new Lease(fingerprint, token, attempt, point, leaseUntil, live ? LeaseEnd.LIVE : LeaseEnd.MAYBE_ENDED,
                EndSetBy.CLAIM, false, false, null));
    }

    /** @return whether {@code token} holds the key: its record is in progress, with that owner */
    boolean holds(String key, String token) {
        Lease l = leases.get(key);
        return l != null && !l.done() && l.owner().equals(token);
    }

    void checkpointed(String key, String point) {
        Lease l = leases.get(key);
        leases.put(key, new Lease(l.fingerprint(), l.owner(), l.attempts(), point, l.leaseUntil(), l.end(), l.setBy(), false, false, null));
    }

    void leaseCompleted(String key, boolean failed, String result) {
        Lease l = leases.get(key);
        leases.put(key, new Lease(l.fingerprint(), l.owner(), l.attempts(), l.point(), l.leaseUntil(), l.end(), l.setBy(), true, failed, result));
    }

    void extended(String key, Instant until, boolean live) {
        leases.put(key, leases.get(key).withEnd(until, live ? LeaseEnd.LIVE : LeaseEnd.MAYBE_ENDED, EndSetBy.EXTEND));
    }

    void released(String key) {
        leases.put(key, leases.get(key).withEnd(null, LeaseEnd.ENDED, EndSetBy.RELEASE));
    }

    /** Every short lease has run out. */
    void shortLeasesRanOut() {
        leases.replaceAll((k, l) -> l.end() == LeaseEnd.MAYBE_ENDED ? l.withEnd(l.leaseUntil(), LeaseEnd.ENDED, l.setBy()) : l);
    }

    /**
     * A fenced write that was refused, or rolled back, wrote {@code value}: it must never be seen.
     *
     * @param broken the promise broken if it is seen
     */
    void refusedWrite(String value, Promise broken) {
        refused.put(value, broken);
    }

    /** @return the promise broken if {@code value} is seen, as it was refused or rolled back; {@code null} if it was not */
    Promise refusedOrigin(String value) {
        return value == null ? null : refused.get(value);
    }
}
