package dev.idempotency.jakarta.transaction;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.TransactionRequiredException;
import jakarta.transaction.Status;
import jakarta.transaction.SystemException;
import org.jspecify.annotations.Nullable;

/** Where the status of the calling thread's transaction is read, and the check that it can carry a record. */
@FunctionalInterface
interface JtaStatus {

    /** @return one of {@link Status}'s constants for the calling thread's transaction */
    int status() throws SystemException;

    /**
     * Refuses, with the reason, unless the calling thread's transaction is active: nothing is written.
     *
     * @param key the key of the call, or {@code null}
     * @param what what was called, for the message
     */
    default void requireActive(@Nullable IdempotencyKey key, String what) {
        int status;
        try {
            status = status();
        } catch (SystemException | RuntimeException e) {
            throw new IdempotencyStoreException(key, "could not read the status of the JTA transaction", e);
        }
        if (status == Status.STATUS_ACTIVE) {
            return;
        }
        if (status == Status.STATUS_NO_TRANSACTION) {
            throw new TransactionRequiredException(key, "no JTA transaction is active on this thread, so the key's record could"
                    + " not be committed atomically with your change. Call " + what + " inside a transaction: a method of a"
                    + " bean with @Transactional (TxType REQUIRED or MANDATORY), or between userTransaction.begin() and"
                    + " commit(). Nothing was written");
        }
        if (status == Status.STATUS_MARKED_ROLLBACK) {
            throw new TransactionRequiredException(key, "the JTA transaction on this thread is marked for rollback, so nothing"
                    + " written in it would be kept. Nothing was written");
        }
        throw new TransactionRequiredException(key, "the JTA transaction on this thread is not active but " + name(status)
                + ", so no record can be written in it. Nothing was written");
    }

    /** @return the name of a {@link Status} constant */
    static String name(int status) {
        switch (status) {
            case Status.STATUS_ACTIVE: return "active";
            case Status.STATUS_MARKED_ROLLBACK: return "marked for rollback";
            case Status.STATUS_PREPARED: return "prepared";
            case Status.STATUS_COMMITTED: return "committed";
            case Status.STATUS_ROLLEDBACK: return "rolled back";
            case Status.STATUS_UNKNOWN: return "of unknown status";
            case Status.STATUS_NO_TRANSACTION: return "absent";
            case Status.STATUS_PREPARING: return "preparing";
            case Status.STATUS_COMMITTING: return "committing";
            case Status.STATUS_ROLLING_BACK: return "rolling back";
            default: return "in status " + status;
        }
    }
}
