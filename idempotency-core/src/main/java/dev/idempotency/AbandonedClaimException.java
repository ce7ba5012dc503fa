package dev.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * A key's claim was committed without its result, so no attempt will ever complete it: the record
 * is in progress, yet no transaction holds it. In transactional mode that has one likely cause:
 * the work committed or rolled back the caller's transaction, closed the connection, or switched
 * auto-commit on, and the caller's own commit or rollback then came too late to keep the claim and
 * the result together. The work must leave its transaction to the caller.
 *
 * <p>Thrown by the attempt whose work ended the transaction, where the store can see it (a
 * connection left in auto-commit mode or closed), and by every later attempt with the key that
 * finds the stranded record. The library cannot know whether the work's writes were committed, so
 * it never runs the work again on its own: check them, then either delete the key's record (for the
 * JDBC store, the row of this scope and key id in the key table), after which a retry runs the work,
 * or let the record's retention end, after which a retry runs the work as for a new key.
 */
public class AbandonedClaimException extends IdempotencyException {

    private static final long serialVersionUID = 1L;

    private static final String CAUSE_AND_REMEDY = ". The likely cause: the work committed or rolled back the caller's"
            + " transaction, closed the connection or switched auto-commit on, so that the key's claim was committed"
            + " without its result; the work must leave the transaction to the caller. The work did not run now. Check"
            + " whether the earlier work's writes were committed, then delete the key's record to let a retry run the work,"
            + " or let the record's retention end, after which a retry runs the work again";

    /**
     * @param key the key concerned
     * @param finding what was found, such as "the key's record is committed while in progress"; the
     *     likely cause and the remedy are appended
     * @param cause the failure that revealed it, or {@code null}
     */
    public AbandonedClaimException(IdempotencyKey key, String finding, @Nullable Throwable cause) {
        super(key, finding + CAUSE_AND_REMEDY, cause);
    }
}
