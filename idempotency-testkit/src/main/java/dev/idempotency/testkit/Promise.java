package dev.idempotency.testkit;

/**
 * The promises of CONTRACT section 3 that {@link IdempotencyStoreContract} checks. Every failure
 * message starts with the promise it found broken.
 */
enum Promise {
    REPLAY("CONTRACT 3.3 (replay)",
            "a committed, unexpired record with the same fingerprint must be replayed with its recorded result; the work must not run"),
    ROLLBACK("CONTRACT 3 (rollback)",
            "an attempt whose transaction rolled back must leave no record: a retry must run the work again"),
    MISMATCH("CONTRACT 3.3 (mismatch)",
            "the same key with a different fingerprint must give Mismatch; the work must not run"),
    EXPIRY("CONTRACT 3.3 (expiry)",
            "a record whose retention has run out (expiry at or before now) must count as absent: the work must run again"),
    HOLDER_COMMITS("CONTRACT 3.3 (concurrent holder commits)",
            "an attempt that finds the key held by an open transaction must wait for it and, once it commits, replay its result"),
    HOLDER_ROLLS_BACK("CONTRACT 3.3 (concurrent holder rolls back)",
            "an attempt that finds the key held by an open transaction must wait for it and, once it rolls back, claim the key"
                    + " and run the work; a rolled-back transaction's record must never be seen by others"),
    LOCK_TIMEOUT("CONTRACT 3.3 (lock timeout)",
            "an attempt that waits longer than the lock timeout for an open holder must get InProgress; the work must not run"),
    WORK_EXCEPTION("CONTRACT 3.4 (work exception)",
            "an exception of the work must reach the caller unchanged, and nothing may be recorded: a retry must run the work again"),
    FINAL_FAILURE("CONTRACT 3.4 (final failure)",
            "a final failure must be recorded without the work's partial writes, and every retry must get the same failure back"),
    SCOPE("CONTRACT 2 (scope)",
            "keys with the same id in different scopes are different keys: one must never see the other's record"),
    EXACT_KEYS("CONTRACT 2 (exact keys)",
            "key ids are compared exactly (case and every character count): ids that differ only in case are different keys"),
    TRANSACTION_REQUIRED("CONTRACT 3.2 (transaction required)",
            "a transaction that has already ended must be refused with TransactionRequiredException before anything is written"),
    PURGE("CONTRACT 8 (purge)",
            "purging must remove expired records only (expiry at or before now), at most the limit per call, and report how many it removed"),
    AT_MOST_ONCE("CONTRACT 3 (guarantee)",
            "among all attempts with one key, at most one committed transaction may contain an execution of the work, and every"
                    + " other attempt must see that execution's result, InProgress or Mismatch");

    private final String tag;
    private final String text;

    Promise(String tag, String text) {
        this.tag = tag;
        this.text = text;
    }

    /** @return the short name that starts every message, such as {@code CONTRACT 3.3 (replay)} */
    String tag() {
        return tag;
    }

    /**
     * @param detail what was observed
     * @return the promise, what it requires, and what happened instead
     */
    String broken(String detail) {
        return tag + ": " + text + ". " + detail;
    }
}
