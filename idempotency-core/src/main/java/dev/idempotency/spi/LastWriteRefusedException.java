package dev.idempotency.spi;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The record that a write-last transaction sent together with its {@code COMMIT} was refused, so the
 * transaction was rolled back and nothing of it was kept: the key already had an unexpired record
 * ({@link Claim.Existing}, read after the rollback), or another open transaction held the key past
 * the lock timeout ({@link Claim.Busy}). Thrown by a {@link TransactionRunner}'s commit, for a write
 * that {@link TransactionalStore#writeLast} left to it; {@link dev.idempotency.ManagedIdempotency}
 * turns it into the usual outcome (replay, mismatch, recorded failure, in progress), and a caller
 * never sees it.
 *
 * <p>Immutable and thread-safe.
 */
public final class LastWriteRefusedException extends IdempotencyStoreException {

    private static final long serialVersionUID = 1L;

    private final transient Claim found;

    /**
     * @param key the key whose record was refused
     * @param found what held the key: {@link Claim.Existing} with the record, or {@link Claim.Busy}
     * @param cause the database's report, or {@code null}
     * @throws IllegalArgumentException if {@code found} is {@link Claim.Acquired}
     */
    public LastWriteRefusedException(IdempotencyKey key, Claim found, @Nullable Throwable cause) {
        super(Objects.requireNonNull(key, "key"), describe(found), cause);
        this.found = found;
    }

    private static String describe(Claim found) {
        Objects.requireNonNull(found, "found");
        if (found instanceof Claim.Acquired) {
            throw new IllegalArgumentException("a refused write found the key held: Existing or Busy, not Acquired");
        }
        return found instanceof Claim.Busy
                ? "the key was held by another open transaction past the lock timeout; the transaction was rolled back"
                : "the key already had a record; the transaction was rolled back";
    }

    /** @return what held the key: {@link Claim.Existing} with the record, or {@link Claim.Busy} */
    public Claim found() {
        return found;
    }
}
