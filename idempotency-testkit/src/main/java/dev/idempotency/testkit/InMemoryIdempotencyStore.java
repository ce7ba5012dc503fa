package dev.idempotency.testkit;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.TransactionRequiredException;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.StoredRecord;
import dev.idempotency.spi.TxSavepoint;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The reference store: records in memory, with transactions of its own
 * ({@link InMemoryIdempotencyStore.Transaction}) that behave like a database's row locks under READ
 * COMMITTED. It passes {@link IdempotencyStoreContract}, and shows in a few lines what a store must
 * do; it is also handy in the tests of an application that does not want a database.
 *
 * <ul>
 *   <li>A transaction sees committed records and its own writes, never another open
 *       transaction's.</li>
 *   <li>Writing a key (a claim, a purge) locks it until the writer commits or rolls back; a second
 *       claimer waits for the lock, up to the request's lock timeout, and then reads the key again.</li>
 *   <li>A savepoint undoes the writes made after it; the locks stay.</li>
 * </ul>
 *
 * <p>Thread-safe; one transaction is used by one thread at a time.
 */
public class InMemoryIdempotencyStore implements IdempotencyStore<InMemoryIdempotencyStore.Transaction> {

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition released = lock.newCondition();
    private final Map<IdempotencyKey, StoredRecord> committed = new HashMap<>();
    private final Map<IdempotencyKey, Transaction> holders = new HashMap<>();
    private final AtomicLong ids = new AtomicLong();

    /** Creates an empty store. */
    public InMemoryIdempotencyStore() {
    }

    /** @return a new open transaction on this store */
    public Transaction begin() {
        return new Transaction(this, ids.incrementAndGet());
    }

    /**
     * Makes the transaction's writes visible to all and releases its locks.
     *
     * @param tx an open transaction of this store
     * @throws IllegalStateException if it is not open or belongs to another store
     */
    public void commit(Transaction tx) {
        lock.lock();
        try {
            checkOpen(tx, "commit");
            tx.writes.forEach((key, record) -> {
                if (record == DELETED) {
                    committed.remove(key);
                } else {
                    committed.put(key, record);
                }
            });
            end(tx, "committed");
        } finally {
            lock.unlock();
        }
    }

    /**
     * Discards the transaction's writes and releases its locks.
     *
     * @param tx an open transaction of this store
     * @throws IllegalStateException if it is not open or belongs to another store
     */
    public void rollback(Transaction tx) {
        lock.lock();
        try {
            checkOpen(tx, "roll back");
            end(tx, "rolled back");
        } finally {
            lock.unlock();
        }
    }

    /** @return the number of committed records, expired ones included */
    public int size() {
        lock.lock();
        try {
            return committed.size();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void checkTransaction(Transaction tx, IdempotencyKey key) {
        Objects.requireNonNull(tx, "tx");
        if (tx.store != this) {
            throw new TransactionRequiredException(key, "the transaction belongs to another store; nothing was written");
        }
        if (tx.state != null) {
            throw new TransactionRequiredException(key, "the transaction is already " + tx.state + "; nothing was written");
        }
    }

    @Override
    public Claim claim(Transaction tx, ClaimRequest request) {
        IdempotencyKey key = request.key();
        long deadline = System.nanoTime() + request.lockTimeout().toNanos();
        lock.lock();
        try {
            checkOpen(tx, "claim");
            Transaction holder;
            while ((holder = holders.get(key)) != null && holder != tx) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return Claim.busy();
                }
                released.awaitNanos(left);
            }
            StoredRecord found = read(tx, key);
            if (found != null && found.expiresAt().isAfter(request.now())) {
                return Claim.existing(found);
            }
            write(tx, key, new StoredRecord(key, request.fingerprint(), RecordStatus.IN_PROGRESS, null, null, request.now(), null,
                    request.expiresAt()));
            return Claim.acquired();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IdempotencyStoreException(key, "interrupted while waiting for the transaction that holds the key", e);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void complete(Transaction tx, Completion completion) {
        IdempotencyKey key = completion.key();
        lock.lock();
        try {
            checkOpen(tx, "complete");
            StoredRecord claimed = read(tx, key);
            if (holders.get(key) != tx || claimed == null) {
                throw new IdempotencyStoreException(key, "this transaction holds no claim on the key", null);
            }
            byte[] result = completion.result() == null ? null : completion.result().clone();
            write(tx, key, new StoredRecord(key, claimed.fingerprint(), completion.status(), completion.codec(), result,
                    claimed.createdAt(), completion.completedAt(), completion.expiresAt()));
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void release(Transaction tx, IdempotencyKey key) {
        lock.lock();
        try {
            checkOpen(tx, "release");
            StoredRecord claimed = read(tx, key);
            if (holders.get(key) == tx && claimed != null && claimed.status() == RecordStatus.IN_PROGRESS) {
                write(tx, key, DELETED);
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public TxSavepoint savepoint(Transaction tx) {
        lock.lock();
        try {
            checkOpen(tx, "set a savepoint in");
            int mark = tx.undo.size();
            return new TxSavepoint() {
                @Override
                public void rollback() {
                    lock.lock();
                    try {
                        checkOpen(tx, "roll back to a savepoint of");
                        while (tx.undo.size() > mark) {
                            Undo u = tx.undo.remove(tx.undo.size() - 1);
                            if (u.previous == null) {
                                tx.writes.remove(u.key);
                            } else {
                                tx.writes.put(u.key, u.previous);
                            }
                        }
                    } finally {
                        lock.unlock();
                    }
                }

                @Override
                public void release() {
                    // Nothing to free: the undo log ends with the transaction.
                }
            };
        } finally {
            lock.unlock();
        }
    }

    @Override
    public int purgeExpired(Transaction tx, Instant now, int limit) {
        Objects.requireNonNull(now, "now");
        lock.lock();
        try {
            checkOpen(tx, "purge in");
            List<IdempotencyKey> expired = new ArrayList<>();
            for (IdempotencyKey key : union(tx)) {
                Transaction holder = holders.get(key);
                StoredRecord r = read(tx, key);
                if ((holder == null || holder == tx) && r != null && !r.expiresAt().isAfter(now)) {
                    expired.add(key);
                    if (expired.size() == limit) {
                        break;
                    }
                }
            }
            for (IdempotencyKey key : expired) {
                write(tx, key, DELETED);
            }
            return expired.size();
        } finally {
            lock.unlock();
        }
    }

    private List<IdempotencyKey> union(Transaction tx) {
        List<IdempotencyKey> keys = new ArrayList<>(committed.keySet());
        for (IdempotencyKey k : tx.writes.keySet()) {
            if (!committed.containsKey(k)) {
                keys.add(k);
            }
        }
        return keys;
    }

    private StoredRecord read(Transaction tx, IdempotencyKey key) {
        StoredRecord r = tx.writes.containsKey(key) ? tx.writes.get(key) : committed.get(key);
        return r == DELETED ? null : r;
    }

    private void write(Transaction tx, IdempotencyKey key, StoredRecord record) {
        tx.undo.add(new Undo(key, tx.writes.get(key)));
        tx.writes.put(key, record);
        holders.put(key, tx);
    }

    private void end(Transaction tx, String state) {
        for (Iterator<Transaction> it = holders.values().iterator(); it.hasNext(); ) {
            if (it.next() == tx) {
                it.remove();
            }
        }
        tx.writes.clear();
        tx.undo.clear();
        tx.state = state;
        released.signalAll();
    }

    private void checkOpen(Transaction tx, String action) {
        Objects.requireNonNull(tx, "tx");
        if (tx.store != this) {
            throw new IllegalStateException("cannot " + action + " " + tx + ": it belongs to another store");
        }
        if (tx.state != null) {
            throw new IllegalStateException("cannot " + action + " " + tx + ": it is already " + tx.state);
        }
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + size() + " records]";
    }

    /** Marks a key deleted in a transaction's writes. */
    private static final StoredRecord DELETED = new StoredRecord(IdempotencyKey.of("-", "-"), dev.idempotency.Fingerprint.NONE,
            RecordStatus.IN_PROGRESS, null, null, Instant.EPOCH, null, Instant.EPOCH);

    private record Undo(IdempotencyKey key, StoredRecord previous) {
    }

    /**
     * A transaction of an {@link InMemoryIdempotencyStore}: open from
     * {@link InMemoryIdempotencyStore#begin()} until its store commits or rolls it back.
     *
     * <p>Not thread-safe: one thread uses it at a time.
     */
    public static final class Transaction {
        private final InMemoryIdempotencyStore store;
        private final long id;
        private final Map<IdempotencyKey, StoredRecord> writes = new LinkedHashMap<>();
        private final List<Undo> undo = new ArrayList<>();
        private volatile String state;

        private Transaction(InMemoryIdempotencyStore store, long id) {
            this.store = store;
            this.id = id;
        }

        /** @return whether it is neither committed nor rolled back */
        public boolean isOpen() {
            return state == null;
        }

        @Override
        public String toString() {
            return "Transaction#" + id + (state == null ? "" : " (" + state + ")");
        }
    }
}
