package dev.idempotency.testkit;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.TransactionRequiredException;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.TransactionalStore;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.StoredRecord;
import dev.idempotency.spi.TxSavepoint;
import java.time.Instant;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A store written the way a first attempt often is: a shared map and a list of pending writes per
 * transaction, without locks. Each {@link Flaw} is one classic mistake; the contract must catch each.
 */
final class FlawedStore implements TransactionalStore<FlawedStore.Tx> {

    enum Flaw {
        /** Looks for a record, then inserts one, with nothing that stops a second claimer in between. */
        CHECK_THEN_INSERT,
        /** Writes go straight to the shared map (undone on rollback): others see uncommitted records. */
        DIRTY_READS,
        /** The result is written to the shared map at once, outside the transaction, over whatever is there. */
        COMPLETION_OUTSIDE_TRANSACTION,
        /** Only an ended transaction is refused: one in auto-commit mode is accepted, and each write commits at once. */
        AUTO_COMMIT_ACCEPTED,
        /** The purge deletes every record in progress it can see, expired or not: its own transaction's claim, and committed ones. */
        PURGE_IN_PROGRESS,
        /**
         * The purge deletes by creation time plus the retention ({@code WHERE created_at <= now - retention}), not by the
         * record's expiry: a record completed long after its claim is purged before it expires.
         */
        PURGE_BY_CREATION_TIME
    }

    static final class Tx {
        private final Map<IdempotencyKey, Optional<StoredRecord>> writes = new HashMap<>();
        private final Map<IdempotencyKey, Optional<StoredRecord>> before = new HashMap<>();
        private boolean open = true;
        private boolean autoCommit;
    }

    private final Flaw flaw;
    private final Map<IdempotencyKey, StoredRecord> shared = new ConcurrentHashMap<>();

    FlawedStore(Flaw flaw) {
        this.flaw = flaw;
    }

    Tx begin() {
        return new Tx();
    }

    /** @return a transaction in auto-commit mode: each write is committed at once */
    Tx beginAutoCommit() {
        Tx tx = new Tx();
        tx.autoCommit = true;
        return tx;
    }

    synchronized void commit(Tx tx) {
        tx.writes.forEach((k, r) -> {
            if (r.isPresent()) {
                shared.put(k, r.get());
            } else {
                shared.remove(k);
            }
        });
        tx.open = false;
    }

    synchronized void rollback(Tx tx) {
        tx.before.forEach((k, r) -> {
            if (r.isPresent()) {
                shared.put(k, r.get());
            } else {
                shared.remove(k);
            }
        });
        tx.open = false;
    }

    @Override
    public void checkTransaction(Tx tx, IdempotencyKey key) {
        if (!tx.open) {
            throw new TransactionRequiredException(key, "the transaction has ended");
        }
        if (tx.autoCommit && flaw != Flaw.AUTO_COMMIT_ACCEPTED) {
            throw new TransactionRequiredException(key, "the transaction is in auto-commit mode");
        }
    }

    @Override
    public Claim claim(Tx tx, ClaimRequest r) {
        StoredRecord found = read(tx, r.key());
        if (found != null && found.expiresAt().isAfter(r.now())) {
            return Claim.existing(found);
        }
        Thread.yield();
        put(tx, r.key(), new StoredRecord(r.key(), r.fingerprint(), RecordStatus.IN_PROGRESS, null, null, r.now(), null, r.expiresAt()));
        return Claim.acquired();
    }

    @Override
    public void complete(Tx tx, Completion c) {
        StoredRecord claimed = read(tx, c.key());
        if (claimed == null) {
            throw new IdempotencyStoreException(c.key(), "no claim", null);
        }
        StoredRecord done = new StoredRecord(c.key(), claimed.fingerprint(), c.status(), c.codec(), c.result(), claimed.createdAt(),
                c.completedAt(), c.expiresAt());
        put(tx, c.key(), done);
        if (flaw == Flaw.COMPLETION_OUTSIDE_TRANSACTION) {
            shared.put(c.key(), done);
        }
    }

    @Override
    public void release(Tx tx, IdempotencyKey key) {
        StoredRecord claimed = read(tx, key);
        if (claimed != null && claimed.status() == RecordStatus.IN_PROGRESS) {
            put(tx, key, null);
        }
    }

    @Override
    public TxSavepoint savepoint(Tx tx) {
        Map<IdempotencyKey, Optional<StoredRecord>> snapshot = new HashMap<>(tx.writes);
        return new TxSavepoint() {
            @Override
            public void rollback() {
                tx.writes.clear();
                tx.writes.putAll(snapshot);
            }

            @Override
            public void release() {
            }
        };
    }

    @Override
    public synchronized int purgeExpired(Tx tx, Instant now, int limit) {
        int n = 0;
        if (flaw == Flaw.PURGE_IN_PROGRESS) {
            for (Map.Entry<IdempotencyKey, Optional<StoredRecord>> own : tx.writes.entrySet()) {
                if (own.getValue().isPresent() && own.getValue().get().status() == RecordStatus.IN_PROGRESS) {
                    own.setValue(Optional.empty());
                    n++;
                }
            }
        }
        for (Iterator<StoredRecord> it = shared.values().iterator(); it.hasNext() && n < limit; ) {
            StoredRecord r = it.next();
            Instant expiry = flaw == Flaw.PURGE_BY_CREATION_TIME ? r.createdAt().plus(StoreFixture.RETENTION) : r.expiresAt();
            if (!expiry.isAfter(now) || flaw == Flaw.PURGE_IN_PROGRESS && r.status() == RecordStatus.IN_PROGRESS) {
                it.remove();
                n++;
            }
        }
        return n;
    }

    private StoredRecord read(Tx tx, IdempotencyKey key) {
        Optional<StoredRecord> own = tx.writes.get(key);
        return own != null ? own.orElse(null) : shared.get(key);
    }

    private synchronized void put(Tx tx, IdempotencyKey key, StoredRecord record) {
        if (flaw == Flaw.DIRTY_READS || tx.autoCommit) {
            tx.before.putIfAbsent(key, Optional.ofNullable(shared.get(key)));
            if (record == null) {
                shared.remove(key);
            } else {
                shared.put(key, record);
            }
        } else {
            tx.writes.put(key, Optional.ofNullable(record));
        }
    }
}
