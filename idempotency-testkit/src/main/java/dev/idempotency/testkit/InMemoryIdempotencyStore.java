package dev.idempotency.testkit;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.TransactionRequiredException;
import dev.idempotency.TxWork;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import dev.idempotency.spi.LeaseClaim;
import dev.idempotency.spi.LeaseRequest;
import dev.idempotency.spi.LeasedCompletion;
import dev.idempotency.spi.PendingOperation;
import dev.idempotency.spi.TransactionalRecoveringStore;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.RecoveryPoint;
import dev.idempotency.spi.StoredRecord;
import dev.idempotency.spi.TransactionRunner;
import dev.idempotency.spi.TxSavepoint;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.Collectors;

/**
 * The reference store: records in memory, with transactions of its own
 * ({@link InMemoryIdempotencyStore.Transaction}) that behave like a database's row locks under READ
 * COMMITTED. It passes {@link IdempotencyStoreContract}, and shows in a few lines what a store must
 * do; it is also handy in the tests of an application that does not want a database.
 *
 * <ul>
 *   <li>A transaction sees committed records and its own writes, never another open
 *       transaction's.</li>
 *   <li>Writing a key (a claim, a lease primitive that changes the record, a purge) locks it until
 *       the writer commits or rolls back; a second writer waits for the lock, up to the request's lock
 *       timeout (a lease primitive without one: {@link #FENCED_WRITE_WAIT}), and then reads the key
 *       again.</li>
 *   <li>A savepoint undoes the writes made after it; the locks stay.</li>
 * </ul>
 *
 * <p>It also keeps leases ({@link dev.idempotency.spi.LeasingStore}): each record carries its owner token, the end of its
 * lease, how many attempts claimed it and its recovery point. Every lease primitive reads the time
 * from the clock given to the constructor, and a record that lease mode wrote is judged by that
 * clock wherever it is met, by a transactional claim and a purge too (the clock rule of
 * {@link dev.idempotency.spi.IdempotencyStore}). A primitive fenced by an owner token changes the record
 * only while it is in progress and that token is its owner: no other attempt took it over, and it
 * was not completed. Releasing a lease ends it without changing the owner. {@link #transactions()}
 * runs the engine's own short transactions. A named operation's name ({@link RecoveringStore})
 * is kept on its row, so that it commits and rolls back with it, and is gone with the row.
 *
 * <p>Thread-safe; one transaction is used by one thread at a time.
 */
public class InMemoryIdempotencyStore implements TransactionalRecoveringStore<InMemoryIdempotencyStore.Transaction> {

    /** How long a fenced lease primitive waits for another transaction that holds the key: 30 seconds. */
    public static final Duration FENCED_WRITE_WAIT = Duration.ofSeconds(30);

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition released = lock.newCondition();
    private final Map<IdempotencyKey, Row> committed = new HashMap<>();
    private final Map<IdempotencyKey, Transaction> holders = new HashMap<>();
    private final AtomicLong ids = new AtomicLong();
    private final InstantSource clock;
    private final TransactionRunner<Transaction> transactions = new Runner();

    /** Creates an empty store whose leases follow the system clock. */
    public InMemoryIdempotencyStore() {
        this(InstantSource.system());
    }

    /**
     * Creates an empty store whose leases follow {@code clock}.
     *
     * @param clock the store's own clock, read by every lease primitive (a test passes a settable one)
     * @throws NullPointerException if {@code clock} is null
     */
    public InMemoryIdempotencyStore(InstantSource clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
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
            tx.writes.forEach((key, row) -> {
                if (row == DELETED) {
                    committed.remove(key);
                } else {
                    committed.put(key, row);
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

    /**
     * The transactions of this store, for {@link dev.idempotency.ManagedIdempotency}: each call begins
     * one, runs the work, and commits it; if the work or the commit throws, the transaction is rolled
     * back and the throwable reaches the caller unchanged.
     *
     * @return the runner; thread-safe
     */
    public TransactionRunner<Transaction> transactions() {
        return transactions;
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
        lock.lock();
        try {
            checkOpen(tx, "claim");
            if (!awaitLock(tx, key, request.lockTimeout())) {
                return Claim.busy();
            }
            Row row = read(tx, key);
            StoredRecord found = record(row);
            if (found != null && !expired(row, request.now())) {
                return Claim.existing(row.visible());
            }
            write(tx, key, new Row(new StoredRecord(key, request.fingerprint(), RecordStatus.IN_PROGRESS, null, null, request.now(), null,
                    request.expiresAt()), null, null, 0, null));
            return Claim.acquired();
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
            Row claimed = read(tx, key);
            if (holders.get(key) != tx || claimed == null) {
                throw new IdempotencyStoreException(key, "this transaction holds no claim on the key", null);
            }
            write(tx, key, claimed.completed(completion.status(), completion.codec(), completion.result(), completion.completedAt(),
                    completion.expiresAt()));
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void release(Transaction tx, IdempotencyKey key) {
        lock.lock();
        try {
            checkOpen(tx, "release");
            StoredRecord claimed = record(read(tx, key));
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
                Row row = read(tx, key);
                if ((holder == null || holder == tx) && record(row) != null && expired(row, now)) {
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

    /**
     * Whether {@code row} has expired, judged by the clock that timed it: a record that lease mode
     * wrote (it has an owner) by this store's clock, a record of transactional mode by the engine's
     * {@code now}.
     */
    private boolean expired(Row row, Instant now) {
        return !row.record.expiresAt().isAfter(row.owner != null ? clock.instant() : now);
    }

    // ---- leases -------------------------------------------------------------------------------------

    @Override
    public LeaseClaim claimLease(Transaction tx, LeaseRequest request) {
        IdempotencyKey key = request.key();
        lock.lock();
        try {
            checkOpen(tx, "claim a lease in");
            if (!awaitLock(tx, key, request.lockTimeout())) {
                return LeaseClaim.busy();
            }
            Instant now = clock.instant();
            Instant leaseUntil = now.plus(request.lease());
            Instant expiresAt = now.plus(request.retention());
            Row row = read(tx, key);
            if (row == null || !row.record.expiresAt().isAfter(now)) {
                write(tx, key, new Row(new StoredRecord(key, request.fingerprint(), RecordStatus.IN_PROGRESS, null, null, now, null, expiresAt),
                        request.ownerToken(), leaseUntil, 1, null));
                return new LeaseClaim.Acquired(1, now, leaseUntil, null);
            }
            if (row.record.status() != RecordStatus.IN_PROGRESS) {
                return new LeaseClaim.Existing(row.record);
            }
            Instant heldUntil = row.leaseUntil != null ? row.leaseUntil : row.record.expiresAt();
            if (!row.record.fingerprint().equals(request.fingerprint()) || heldUntil.isAfter(now)) {
                return new LeaseClaim.Held(row.record.fingerprint(), heldUntil, row.attempts, now, row.record.expiresAt());
            }
            StoredRecord r = row.record;
            int attempt = row.attempts + 1;
            write(tx, key, new Row(new StoredRecord(key, r.fingerprint(), r.status(), null, null, r.createdAt(), null, expiresAt),
                    request.ownerToken(), leaseUntil, attempt, row.point, row.operation));
            return new LeaseClaim.Acquired(attempt, now, leaseUntil, row.point);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public Optional<Instant> extendLease(Transaction tx, IdempotencyKey key, String ownerToken, Duration lease) {
        Objects.requireNonNull(lease, "lease");
        return fenced(tx, key, ownerToken, "extend a lease in", (row, now) -> {
            Instant until = now.plus(lease);
            return new Fenced<>(row.withLease(until), until);
        });
    }

    @Override
    public boolean checkpoint(Transaction tx, IdempotencyKey key, String ownerToken, RecoveryPoint point) {
        Objects.requireNonNull(point, "point");
        RecoveryPoint copy = new RecoveryPoint(point.codec(), point.state() == null ? null : point.state().clone());
        return fenced(tx, key, ownerToken, "record a recovery point in",
                (row, now) -> new Fenced<>(new Row(row.record, row.owner, row.leaseUntil, row.attempts, copy, row.operation), true)).isPresent();
    }

    /** Keeps the operation's name on its row, so that it commits and rolls back with the row. */
    @Override
    public boolean enlist(Transaction tx, IdempotencyKey key, String ownerToken, String operation) {
        Objects.requireNonNull(operation, "operation");
        return fenced(tx, key, ownerToken, "enlist a named operation in", (row, now) -> new Fenced<>(row.named(operation), true))
                .isPresent();
    }

    @Override
    public void delist(Transaction tx, IdempotencyKey key) {
        Objects.requireNonNull(key, "key");
        lock.lock();
        try {
            checkOpen(tx, "delist a named operation in");
            if (!awaitLock(tx, key, FENCED_WRITE_WAIT)) {
                throw new IdempotencyStoreException(key, "another transaction held the key for longer than " + FENCED_WRITE_WAIT, null);
            }
            Row row = read(tx, key);
            if (row != null && row.operation != null) {
                write(tx, key, row.named(null));
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public List<PendingOperation> pending(Transaction tx, IdempotencyKey after, int limit) {
        lock.lock();
        try {
            checkOpen(tx, "list the named operations in");
            Instant now = clock.instant();
            return union(tx).stream()
                    .filter(k -> after == null || KEY_ORDER.compare(k, after) > 0)
                    .map(k -> read(tx, k))
                    .filter(row -> row != null && row.operation != null)
                    .sorted(Comparator.comparing(row -> row.record.key(), KEY_ORDER))
                    .limit(limit)
                    .map(row -> new PendingOperation(row.record.key(), row.operation, row.record.status(), row.record.fingerprint(),
                            row.attempts, row.record.status() == RecordStatus.IN_PROGRESS ? row.leaseUntil : null, now))
                    .collect(Collectors.toList());
        } finally {
            lock.unlock();
        }
    }

    /** The order of {@link #pending}: scope, then id, character by character. */
    private static final Comparator<IdempotencyKey> KEY_ORDER =
            Comparator.comparing(IdempotencyKey::scope).thenComparing(IdempotencyKey::id);

    @Override
    public Optional<Instant> completeLeased(Transaction tx, String ownerToken, LeasedCompletion completion) {
        return fenced(tx, completion.key(), ownerToken, "complete a lease in", (row, now) -> new Fenced<>(
                row.completed(completion.status(), completion.codec(), completion.result(), now, now.plus(completion.retention())), now));
    }

    @Override
    public boolean releaseLease(Transaction tx, IdempotencyKey key, String ownerToken) {
        return fenced(tx, key, ownerToken, "release a lease in", (row, now) -> new Fenced<>(row.withLease(now), true)).isPresent();
    }

    /**
     * Deletes the key's record if {@code ownerToken} holds it, as
     * {@link dev.idempotency.spi.LeaseOnlyStore#withdrawClaim} promises, for the store seen without
     * transactions.
     *
     * @return whether the record was deleted
     */
    boolean withdrawClaim(Transaction tx, IdempotencyKey key, String ownerToken) {
        return fenced(tx, key, ownerToken, "withdraw a claim in", (row, now) -> new Fenced<>(DELETED, true)).isPresent();
    }

    /** A fenced change: the row to write and what to answer. */
    private record Fenced<T>(Row row, T answer) {
    }

    private interface FencedChange<T> {
        Fenced<T> apply(Row row, Instant now);
    }

    /** Applies {@code change} if {@code ownerToken} holds the key: its record is in progress, with that owner. */
    private <T> Optional<T> fenced(Transaction tx, IdempotencyKey key, String ownerToken, String action, FencedChange<T> change) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(ownerToken, "ownerToken");
        lock.lock();
        try {
            checkOpen(tx, action);
            if (!awaitLock(tx, key, FENCED_WRITE_WAIT)) {
                throw new IdempotencyStoreException(key, "another transaction held the key for longer than " + FENCED_WRITE_WAIT, null);
            }
            Row row = read(tx, key);
            if (row == null || row.record.status() != RecordStatus.IN_PROGRESS || !ownerToken.equals(row.owner)) {
                return Optional.empty();
            }
            Fenced<T> changed = change.apply(row, clock.instant());
            write(tx, key, changed.row());
            return Optional.of(changed.answer());
        } finally {
            lock.unlock();
        }
    }

    // ---- rows and locks -----------------------------------------------------------------------------

    /**
     * Waits, holding {@link #lock}, until no other open transaction holds {@code key}.
     *
     * @return whether the key is free for {@code tx}; {@code false} if the timeout ran out first
     */
    private boolean awaitLock(Transaction tx, IdempotencyKey key, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        Transaction holder;
        try {
            while ((holder = holders.get(key)) != null && holder != tx) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                released.awaitNanos(left);
            }
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IdempotencyStoreException(key, "interrupted while waiting for the transaction that holds the key", e);
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

    private Row read(Transaction tx, IdempotencyKey key) {
        Row r = tx.writes.containsKey(key) ? tx.writes.get(key) : committed.get(key);
        return r == DELETED ? null : r;
    }

    private static StoredRecord record(Row row) {
        return row == null ? null : row.record;
    }

    private void write(Transaction tx, IdempotencyKey key, Row row) {
        tx.undo.add(new Undo(key, tx.writes.get(key)));
        tx.writes.put(key, row);
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

    /**
     * A key's record, and what lease mode keeps with it: the owner token, the end of the lease, how
     * many attempts claimed it, and the recovery point. A record of transactional mode has no owner.
     */
    private record Row(StoredRecord record, String owner, Instant leaseUntil, int attempts, RecoveryPoint point, String operation) {

        Row(StoredRecord record, String owner, Instant leaseUntil, int attempts, RecoveryPoint point) {
            this(record, owner, leaseUntil, attempts, point, null);
        }

        Row named(String name) {
            return new Row(record, owner, leaseUntil, attempts, point, name);
        }

        /** @return the record as a claim hands it back: with its lease end while in progress in lease mode */
        StoredRecord visible() {
            if (leaseUntil == null || record.status() != RecordStatus.IN_PROGRESS) {
                return record;
            }
            return new StoredRecord(record.key(), record.fingerprint(), record.status(), record.codec(), record.result(),
                    record.createdAt(), record.completedAt(), record.expiresAt(), leaseUntil);
        }

        Row withLease(Instant until) {
            return new Row(record, owner, until, attempts, point, operation);
        }

        Row completed(RecordStatus status, String codec, byte[] result, Instant completedAt, Instant expiresAt) {
            byte[] copy = result == null ? null : result.clone();
            return new Row(new StoredRecord(record.key(), record.fingerprint(), status, codec, copy, record.createdAt(), completedAt, expiresAt),
                    owner, leaseUntil, attempts, point, operation);
        }
    }

    /** Marks a key deleted in a transaction's writes. */
    private static final Row DELETED = new Row(new StoredRecord(IdempotencyKey.of("-", "-"), Fingerprint.NONE, RecordStatus.IN_PROGRESS,
            null, null, Instant.EPOCH, null, Instant.EPOCH), null, null, 0, null);

    private record Undo(IdempotencyKey key, Row previous) {
    }

    /** Runs each piece of work in a transaction of this store: begin, run, commit; roll back on any throwable. */
    private final class Runner implements TransactionRunner<Transaction> {
        @Override
        public <T, X extends Exception> T inTransaction(TxWork<Transaction, T, X> work) throws X {
            Transaction tx = begin();
            T result;
            try {
                result = work.apply(tx);
                commit(tx);
            } catch (Throwable t) {
                if (tx.isOpen()) {
                    try {
                        rollback(tx);
                    } catch (RuntimeException e) {
                        t.addSuppressed(e);
                    }
                }
                throw t;
            }
            return result;
        }

        @Override
        public String toString() {
            return "transactions of " + InMemoryIdempotencyStore.this;
        }
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
        private final Map<IdempotencyKey, Row> writes = new LinkedHashMap<>();
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
