package dev.idempotency.fake;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.TransactionRequiredException;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.ResultTooLargeException;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.LeasedCompletion;
import dev.idempotency.spi.LeasingStore;
import dev.idempotency.spi.TransactionalStore;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.RecoveryPoint;
import dev.idempotency.spi.StoredRecord;
import dev.idempotency.spi.TxSavepoint;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * A deliberately simple leasing store over maps, for the engine's own tests: one committed state,
 * copied into each {@link FakeTx} and swapped back on commit. No concurrency, no lock waits: a key
 * listed in {@link #busy} answers "busy". Failures are injected through the public fields.
 */
public final class FakeStore implements TransactionalStore<FakeTx>, LeasingStore<FakeTx> {

    /** A stored row: the record, plus what lease mode keeps. */
    record Row(StoredRecord record, String owner, int attempts, RecoveryPoint point) {
    }

    private Map<IdempotencyKey, Row> committed = new HashMap<>();
    private List<String> committedWrites = new ArrayList<>();

    /** The store's own clock, for lease mode. */
    public Instant storeNow = Instant.parse("2026-01-01T00:00:00Z");
    /** Keys another (imaginary) transaction holds past the lock timeout. */
    public final Set<IdempotencyKey> busy = new HashSet<>();
    /** Every primitive called, in order, as "name:key". */
    public final List<String> calls = new ArrayList<>();
    public final List<ClaimRequest> claimRequests = new ArrayList<>();
    public final List<List<ClaimRequest>> claimAllRequests = new ArrayList<>();
    public final List<Integer> purgeLimits = new ArrayList<>();
    /** The listener the last {@link #heardBy} was given, if any. */
    public IdempotencyListener heardBy;
    /** Every call of a primitive that has a default (writeLast, completeAll), as "name:first key". */
    public final List<String> defaultsCalled = new ArrayList<>();

    public RuntimeException failSavepoint;
    public RuntimeException failSavepointRollback;
    public RuntimeException failComplete;
    public RuntimeException failRelease;
    /** A limit of the store's own on a completed lease-mode result, in bytes: over it, completeLeased refuses before writing. */
    public int completedResultLimit = Integer.MAX_VALUE;
    /** The same limit on a recovery point's state: over it, checkpoint refuses before writing. */
    public int recoveryPointLimit = Integer.MAX_VALUE;
    /** Thrown by the check numbered {@link #failCheckAt} (0 for the first check of this store). */
    public RuntimeException failCheck;
    public int failCheckAt = -1;
    /** Replaces the answer of claimAll, if set. */
    public Supplier<List<Claim>> claimAllAnswer;
    /** Run at the start of every claimLease, to change the store between two polls. */
    public java.util.function.Consumer<FakeTx> onClaimLease;
    /** The owner token of every lease request. */
    public final List<String> ownerTokens = new ArrayList<>();
    /** Makes every fenced lease primitive report the lease lost. */
    public boolean loseLease;

    private int checks;

    // ---- transactions ----

    public FakeTx begin() {
        return new FakeTx(committed, committedWrites);
    }

    public void commit(FakeTx tx) {
        committed = new HashMap<>(tx.rows);
        committedWrites = new ArrayList<>(tx.writes);
    }

    /** @return the committed record of the key, if any */
    public Optional<StoredRecord> committed(IdempotencyKey key) {
        return Optional.ofNullable(committed.get(key)).map(Row::record);
    }

    public List<String> committedWrites() {
        return List.copyOf(committedWrites);
    }

    /** Writes a committed record directly. */
    public void put(StoredRecord record) {
        committed.put(record.key(), new Row(record, null, 1, null));
    }

    /** Writes a record in {@code tx}. */
    public void put(FakeTx tx, StoredRecord record) {
        tx.rows.put(record.key(), new Row(record, null, 1, null));
    }

    /** Writes a committed lease-mode record in progress. */
    public void putLeased(StoredRecord record, String owner, int attempts, RecoveryPoint point) {
        committed.put(record.key(), new Row(record, owner, attempts, point));
    }

    /** @return the record of the key as {@code tx} sees it, if any */
    public Optional<StoredRecord> in(FakeTx tx, IdempotencyKey key) {
        return Optional.ofNullable(tx.rows.get(key)).map(Row::record);
    }

    public RecoveryPoint committedPoint(IdempotencyKey key) {
        Row row = committed.get(key);
        return row == null ? null : row.point();
    }

    // ---- IdempotencyStore ----

    @Override
    public FakeStore heardBy(IdempotencyListener listener) {
        heardBy = listener;
        return this;
    }

    @Override
    public void checkTransaction(FakeTx tx, IdempotencyKey key) {
        calls.add("check:" + key.id());
        if (!tx.open) {
            throw new TransactionRequiredException(key, "the fake transaction was ended");
        }
        if (checks++ == failCheckAt) {
            throw failCheck;
        }
    }

    @Override
    public Claim claim(FakeTx tx, ClaimRequest request) {
        calls.add("claim:" + request.key().id());
        claimRequests.add(request);
        if (busy.contains(request.key())) {
            return Claim.busy();
        }
        Row row = tx.rows.get(request.key());
        if (row != null && row.record().expiresAt().isAfter(request.now())) {
            return Claim.existing(row.record());
        }
        tx.rows.put(request.key(), new Row(new StoredRecord(request.key(), request.fingerprint(), RecordStatus.IN_PROGRESS, null, null,
                request.now(), null, request.expiresAt()), null, 1, null));
        return Claim.acquired();
    }

    @Override
    public List<Claim> claimAll(FakeTx tx, List<ClaimRequest> requests) {
        claimAllRequests.add(List.copyOf(requests));
        List<Claim> claims = TransactionalStore.super.claimAll(tx, requests);
        return claimAllAnswer != null ? claimAllAnswer.get() : claims;
    }

    @Override
    public void complete(FakeTx tx, Completion completion) {
        calls.add("complete:" + completion.key().id());
        if (failComplete != null) {
            throw failComplete;
        }
        Row row = tx.rows.get(completion.key());
        if (row == null || row.record().status() != RecordStatus.IN_PROGRESS) {
            throw new IdempotencyStoreException(completion.key(), "no claim to complete", null);
        }
        StoredRecord r = row.record();
        tx.rows.put(completion.key(), new Row(new StoredRecord(r.key(), r.fingerprint(), completion.status(), completion.codec(),
                completion.result(), r.createdAt(), completion.completedAt(), completion.expiresAt()), null, row.attempts(), row.point()));
    }

    @Override
    public void completeAll(FakeTx tx, List<Completion> completions) {
        defaultsCalled.add("completeAll:" + (completions.isEmpty() ? "" : completions.get(0).key().id()));
        TransactionalStore.super.completeAll(tx, completions);
    }

    @Override
    public Claim writeLast(FakeTx tx, ClaimRequest request, Completion completion) {
        defaultsCalled.add("writeLast:" + request.key().id());
        return TransactionalStore.super.writeLast(tx, request, completion);
    }

    @Override
    public void release(FakeTx tx, IdempotencyKey key) {
        calls.add("release:" + key.id());
        if (failRelease != null) {
            throw failRelease;
        }
        Row row = tx.rows.get(key);
        if (row != null && row.record().status() == RecordStatus.IN_PROGRESS) {
            tx.rows.remove(key);
        }
    }

    @Override
    public TxSavepoint savepoint(FakeTx tx) {
        calls.add("savepoint");
        if (failSavepoint != null) {
            throw failSavepoint;
        }
        Map<IdempotencyKey, Row> rows = new HashMap<>(tx.rows);
        List<String> writes = new ArrayList<>(tx.writes);
        return new TxSavepoint() {
            @Override
            public void rollback() {
                calls.add("savepoint-rollback");
                if (failSavepointRollback != null) {
                    throw failSavepointRollback;
                }
                tx.rows.clear();
                tx.rows.putAll(rows);
                tx.writes.clear();
                tx.writes.addAll(writes);
            }

            @Override
            public void release() {
                calls.add("savepoint-release");
            }
        };
    }

    @Override
    public int purgeExpired(FakeTx tx, Instant now, int limit) {
        purgeLimits.add(limit);
        int deleted = 0;
        for (IdempotencyKey key : new ArrayList<>(tx.rows.keySet())) {
            if (deleted < limit && !tx.rows.get(key).record().expiresAt().isAfter(now)) {
                tx.rows.remove(key);
                deleted++;
            }
        }
        return deleted;
    }

    // ---- LeasingStore ----

    @Override
    public LeaseClaim claimLease(FakeTx tx, LeaseRequest request) {
        calls.add("claimLease:" + request.key().id());
        ownerTokens.add(request.ownerToken());
        if (onClaimLease != null) {
            onClaimLease.accept(tx);
        }
        if (busy.contains(request.key())) {
            return LeaseClaim.busy();
        }
        Row row = tx.rows.get(request.key());
        Instant leaseUntil = storeNow.plus(request.lease());
        if (row != null && row.record().expiresAt().isAfter(storeNow)) {
            StoredRecord r = row.record();
            if (r.status() != RecordStatus.IN_PROGRESS) {
                return new LeaseClaim.Existing(r);
            }
            if (!r.fingerprint().equals(request.fingerprint()) || r.leaseUntil().isAfter(storeNow)) {
                return new LeaseClaim.Held(r.fingerprint(), r.leaseUntil(), row.attempts(), storeNow);
            }
            tx.rows.put(r.key(), new Row(withLease(r, leaseUntil), request.ownerToken(), row.attempts() + 1, row.point()));
            return new LeaseClaim.Acquired(row.attempts() + 1, storeNow, leaseUntil, row.point());
        }
        tx.rows.put(request.key(), new Row(new StoredRecord(request.key(), request.fingerprint(), RecordStatus.IN_PROGRESS, null, null,
                storeNow, null, storeNow.plus(request.retention()), leaseUntil), request.ownerToken(), 1, null));
        return new LeaseClaim.Acquired(1, storeNow, leaseUntil, null);
    }

    private static StoredRecord withLease(StoredRecord r, Instant leaseUntil) {
        return new StoredRecord(r.key(), r.fingerprint(), r.status(), r.codec(), r.result(), r.createdAt(), r.completedAt(),
                r.expiresAt(), leaseUntil);
    }

    private Row held(FakeTx tx, IdempotencyKey key, String token) {
        Row row = tx.rows.get(key);
        return row != null && token.equals(row.owner()) && row.record().status() == RecordStatus.IN_PROGRESS ? row : null;
    }

    @Override
    public Optional<Instant> extendLease(FakeTx tx, IdempotencyKey key, String ownerToken, Duration lease) {
        calls.add("extendLease:" + key.id());
        Row row = held(tx, key, ownerToken);
        if (row == null || loseLease) {
            return Optional.empty();
        }
        Instant until = storeNow.plus(lease);
        tx.rows.put(key, new Row(withLease(row.record(), until), row.owner(), row.attempts(), row.point()));
        return Optional.of(until);
    }

    @Override
    public boolean checkpoint(FakeTx tx, IdempotencyKey key, String ownerToken, RecoveryPoint point) {
        calls.add("checkpoint:" + key.id());
        if (point.state() != null && point.state().length > recoveryPointLimit) {
            throw new ResultTooLargeException(key, "the recovery point is " + point.state().length + " bytes, over the fake store's"
                    + " limit of " + recoveryPointLimit + " bytes", "nothing was written", point.state().length, recoveryPointLimit, null);
        }
        Row row = held(tx, key, ownerToken);
        if (row == null || loseLease) {
            return false;
        }
        tx.rows.put(key, new Row(row.record(), row.owner(), row.attempts(), point));
        return true;
    }

    @Override
    public Optional<Instant> completeLeased(FakeTx tx, String ownerToken, LeasedCompletion completion) {
        calls.add("completeLeased:" + completion.key().id());
        if (failComplete != null) {
            throw failComplete;
        }
        byte[] result = completion.result();
        if (completion.status() == RecordStatus.COMPLETED && result != null && result.length > completedResultLimit) {
            throw new ResultTooLargeException(completion.key(), "the result is " + result.length + " bytes, over the fake store's limit of "
                    + completedResultLimit + " bytes", "nothing was written", result.length, completedResultLimit, null);
        }
        Row row = held(tx, completion.key(), ownerToken);
        if (row == null || loseLease) {
            return Optional.empty();
        }
        StoredRecord r = row.record();
        tx.rows.put(r.key(), new Row(new StoredRecord(r.key(), r.fingerprint(), completion.status(), completion.codec(),
                completion.result(), r.createdAt(), storeNow, storeNow.plus(completion.retention())), null, row.attempts(), row.point()));
        return Optional.of(storeNow);
    }

    @Override
    public boolean releaseLease(FakeTx tx, IdempotencyKey key, String ownerToken) {
        calls.add("releaseLease:" + key.id());
        if (failRelease != null) {
            throw failRelease;
        }
        Row row = held(tx, key, ownerToken);
        if (row == null) {
            return false;
        }
        tx.rows.put(key, new Row(withLease(row.record(), storeNow), row.owner(), row.attempts(), row.point()));
        return true;
    }

    /** @return a fingerprint-free record of a completed result */
    public static StoredRecord completed(IdempotencyKey key, Fingerprint fingerprint, String codec, byte[] result, Instant at) {
        return new StoredRecord(key, fingerprint, RecordStatus.COMPLETED, codec, result, at, at, at.plus(Duration.ofDays(1)));
    }
}
