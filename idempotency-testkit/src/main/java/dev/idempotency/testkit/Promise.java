package dev.idempotency.testkit;

/**
 * The promises of sections 2 (vocabulary), 3 (transactional mode), 4 (lease mode), 8 (operations)
 * and 9 (batch jobs) of docs/contract.md that {@link IdempotencyStoreContract} checks, numbered as
 * there. Every failure message starts with the promise it found broken. The store's side of
 * section 4 is listed in the Javadoc of {@link dev.idempotency.spi.LeasingStore}; the promises of
 * section 4 without a step number are the engine's protocol in
 * {@link dev.idempotency.ManagedIdempotency}.
 */
enum Promise {
    REPLAY("Contract 3.3 (replay)",
            "a committed, unexpired record with the same fingerprint must be replayed with its recorded result; the work must not run"),
    ROLLBACK("Contract 3 (rollback)",
            "an attempt whose transaction rolled back must leave no record: a retry must run the work again"),
    MISMATCH("Contract 3.3 (mismatch)",
            "the same key with a different fingerprint must give Mismatch; the work must not run"),
    MISMATCH_IN_PROGRESS("Contract 3.3 (mismatch in progress)",
            "a record in progress that the attempt can see (its own transaction's claim, met by a nested call, or a committed"
                    + " lease) must be answered with its own fingerprint: Mismatch to another fingerprint, InProgress to the same;"
                    + " the work must not run"),
    RESULT("Contract 3.5 (result)",
            "the result must be recorded and replayed exactly: the codec's name and every byte, an empty result as empty, and a"
                    + " null result (no bytes) as a completed record that replays null"),
    RESULT_SIZE("Contract 3.5 (largest result)",
            "a result as large as the limit allows (the store's, by default the policy's maxResultBytes) must be recorded and"
                    + " replayed exactly, every byte"),
    COMPLETION_TIMES("Contract 3.5 (completion times)",
            "complete must write the completion's completedAt and expiresAt as given, to the millisecond, and keep the claim's"
                    + " createdAt: a record expires its retention after it was completed, not after it was claimed, however long"
                    + " the work took"),
    EXPIRY("Contract 3.3 (expiry)",
            "a record whose retention has run out (expiry at or before now) must count as absent: the work must run again"),
    HOLDER_COMMITS("Contract 3.3 (concurrent holder commits)",
            "an attempt that finds the key held by an open transaction must wait for it and, once it commits, replay its result"),
    HOLDER_ROLLS_BACK("Contract 3.3 (concurrent holder rolls back)",
            "an attempt that finds the key held by an open transaction must wait for it and, once it rolls back, claim the key"
                    + " and run the work; a rolled-back transaction's record must never be seen by others"),
    LOCK_TIMEOUT("Contract 3.3 (lock timeout)",
            "an attempt that waits longer than the lock timeout for an open holder must get InProgress, no later than the"
                    + " timeout rounded up to whole seconds plus a tolerance of 2 seconds; the work must not run"),
    WORK_EXCEPTION("Contract 3.4 (work exception)",
            "an exception of the work must reach the caller unchanged, and nothing may be recorded: a retry must run the work again"),
    FINAL_FAILURE("Contract 3.4 (final failure)",
            "a final failure must be recorded without the work's partial writes, and every retry must get the same failure back"),
    SCOPE("Contract 2 (scope)",
            "keys with the same id in different scopes are different keys: one must never see the other's record"),
    EXACT_KEYS("Contract 2 (exact keys)",
            "scopes and key ids are compared exactly (case and every character count): a scope or an id that differs only in case"
                    + " makes a different key"),
    KEY_LIMITS("Contract 2 (largest keys)",
            "a key as large as the limits allow (a scope and an id of the largest length, of every printable ASCII character but"
                    + " the space) must be recorded and replayed like any other, and kept apart from keys that differ from it in one"
                    + " character only, the last or its case; the limits are the store's, by default the policy's"),
    TRANSACTION_REQUIRED("Contract 3.2 (transaction required)",
            "a transaction that cannot carry the record atomically with the work (ended, auto-commit, read-only, another store's)"
                    + " must be refused with TransactionRequiredException before anything is written; the work must not run"),
    PURGE("Contract 8 (purge)",
            "purging must remove expired records only (expiry at or before now), at most the limit per call, and report how many it"
                    + " removed; a record in progress is removed only once its own expiry has passed, whether it is the purging"
                    + " transaction's own claim, another open transaction's, a claim committed without its result, or a lease that ended"),
    AT_MOST_ONCE("Contract 3 (guarantee)",
            "among all attempts with one key, at most one committed transaction may contain an execution of the work, and every"
                    + " other attempt must see that execution's result, InProgress or Mismatch"),
    CHUNK_ONCE("Contract 9 (chunk runs once)",
            "a chunk of new keys must run each item once, with one outcome per item in input order; a retry of the committed"
                    + " chunk must replay every item's own result, in input order, without running any work"),
    CHUNK_OUTCOMES("Contract 9 (each item its own outcome)",
            "each item of a chunk must get the outcome of its own key's record: a recorded key replayed, a new key executed, a key"
                    + " whose record expired executed again, a key recorded with another fingerprint Mismatch; the work must run for"
                    + " the new and the expired keys only, and their results must be recorded"),
    CHUNK_ROLLBACK("Contract 9 (chunk rolled back)",
            "a chunk whose transaction rolled back must leave no record: a retry of the chunk must run every item again"),
    CHUNK_HOLDER("Contract 9 (chunk waits for a holder)",
            "a chunk whose keys an open transaction holds must wait for it and, once it commits, replay its results; the work"
                    + " must not run for those keys"),
    CHUNK_LOCK_TIMEOUT("Contract 9 (chunk past the lock timeout)",
            "a chunk one of whose keys an open transaction holds past the lock timeout must answer InProgress for that key without"
                    + " running its work, and must not fail: the chunk's other items run (or, where the store locks more than the key,"
                    + " answer InProgress too), and its transaction can be committed"),
    CHUNK_LOCK_ORDER("Contract 9 (overlapping chunks)",
            "two chunks whose keys overlap, claimed at once, must take their locks in the engine's order (by scope, then id)"
                    + " and wait for each other: neither may deadlock nor answer InProgress for a key that no open transaction holds"
                    + " once the other has committed"),
    CHUNK_DUPLICATE("Contract 9 (duplicate key in a chunk)",
            "a chunk with a key twice must be refused with DuplicateKeyInChunkException before anything is written: no work runs,"
                    + " and a retry without the duplicate runs every item"),
    CHUNK_FINAL_FAILURE("Contract 9 (final failure in a chunk)",
            "a final failure of one item must be recorded for that item alone, without its partial writes; the other items' results"
                    + " must be recorded too, and a retry must replay each item's own outcome without running any work"),
    HOOKS("KIT HOOKS",
            "begin() must return a new open transaction on every call, and commit(tx) and rollback(tx) must end it: for JDBC,"
                    + " commit or roll back, then close the connection, which gives it back to the pool (a hook that does not close"
                    + " leaves the transaction usable and drains the pool, so that later tests wait for a connection)"),
    LEASE_NEW("Contract 4.1 (new lease)",
            "claimLease must take a key without a record as attempt 1, with the request's owner token, a lease until the store's now"
                    + " plus the lease, and no recovery point; the claim holds once its transaction commits, and a rolled-back claim"
                    + " leaves nothing"),
    LEASE_ATOMIC("Contract 4.1 (atomic claim)",
            "a lease claim that meets an open transaction holding the key must wait for it and then see its committed claim (Held),"
                    + " or claim the key itself if it rolled back; of lease claims racing for one key, exactly one must get it and"
                    + " every other must be told it is held"),
    LEASE_CLOCK("Contract 4.6 (one clock)",
            "lease ends must be computed and compared by the store's own clock, never by the application node's: a node whose"
                    + " clock runs ahead must not take over a live lease, and a node whose clock runs behind must take over a lease"
                    + " that ended"),
    LEASE_RECORD_CLOCK("Contract 4.6 (a record is judged by the clock that timed it)",
            "a record that lease mode wrote must be judged by the store's own clock when a transactional claim or a purge meets it,"
                    + " never by the engine's now: an engine whose clock runs ahead must not claim over or purge a live lease record,"
                    + " and one whose clock runs behind must count as absent, and purge, a lease record whose retention ended"),
    LEASE_EXPIRED("Contract 4.1 (expired record)",
            "a record whose retention has run out must be claimed anew as attempt 1, without the recovery point of its earlier life"),
    LEASE_LIVE("Contract 4.2 (live lease)",
            "a record in progress whose lease has not ended must never be taken over: claimLease must answer Held with the end of"
                    + " the lease and the attempts so far"),
    LEASE_TAKE_OVER("Contract 4.5 (take-over)",
            "once the lease has ended (or was released), claimLease must take the record over for the new owner token, counting"
                    + " one more attempt, with a lease until the store's now plus the lease"),
    LEASE_MISMATCH("Contract 4.2 (mismatch)",
            "a record in progress with another fingerprint must never be taken over, even after its lease ended: claimLease must"
                    + " answer Held with that record's fingerprint"),
    LEASE_FOUND("Contract 4.1 (found)",
            "a completed or failed, unexpired record must be Existing, with the status, codec, result and times that completeLeased"
                    + " recorded"),
    FENCING("Contract 4.4 (fencing)",
            "extendLease, checkpoint, completeLeased and releaseLease must change the record only while the given owner token holds"
                    + " it (no other attempt took it over), and report whether they did; the holder's own writes must stand"),
    LEASE_EXTEND("Contract 4.3 (extend)",
            "extendLease by the holder must move the end of the lease to the store's now plus the new lease, and report it"),
    LEASE_RELEASE("Contract 4.5 (release)",
            "releaseLease by the holder must end the lease at once, so that the next attempt takes the record over, with the attempt"
                    + " count and the recovery point kept"),
    LEASE_WITHDRAW("Contract 4.5 (withdrawal)",
            "withdrawClaim by the holder of a claim that recorded nothing else must leave nothing of the key, so that the next claim,"
                    + " of any fingerprint, is attempt 1, and answer true; or, as LeaseOnlyStore's default, only end the lease and answer"
                    + " false, so that the next claim takes the record over at once; a token that no longer holds the record (taken"
                    + " over, or completed) must change nothing and answer false. On a store with transactions the claim's rollback"
                    + " is the withdrawal: it must leave nothing of the key"),
    RECOVERY_POINT("Contract 4.7 (recovery point)",
            "a committed recovery point must be handed to the next owner unchanged, and only replaced by a later checkpoint: never"
                    + " cleared or set back by a take-over or a release"),
    LEASED_CALL("Contract 4 (leased call)",
            "a leased call must run once, and its result must be recorded and replayed to every retry without the call running again"),
    LEASED_CALL_THROWS("Contract 4 (call throws)",
            "a call that throws a failure that is not final must pass it through unchanged and end the lease at once, so that a retry"
                    + " runs at once as the next attempt"),
    LEASED_FINAL_FAILURE("Contract 4 (final failure)",
            "a final failure of a leased call must be recorded and replayed to every retry, without the call running again"),
    LEASED_RESUME("Contract 4 (resume)",
            "an attempt that takes over a claim whose prepare phase committed must not run prepare again: its call must receive the"
                    + " recorded value"),
    WRITE_LAST("Contract 3.8 (write-last)",
            "writeLast must write the completed record only if the key has no unexpired record, wait for an open holder of the key"
                    + " and then find its committed record (or write if it rolled back), replace an expired record, and keep nothing of a"
                    + " transaction that rolls back"),
    PENDING_LISTED("Contract 4.8 (named operations listed)",
            "a named operation enlisted with its claim must be listed with its record's state (in progress, its fingerprint,"
                    + " attempts and lease end; then its outcome) until it is delisted, and an enlist that rolls back, or whose token"
                    + " does not hold the record, must list nothing"),
    PENDING_PAGES("Contract 4.8 (pages)",
            "the named operations must be listed exactly once across pages, in the order of their keys"),
    RECOVERED("Contract 4.8 (recovery worker)",
            "an operation whose lease ended must be resumed by the recovery worker at its recovery point, once, its result recorded"
                    + " and replayed to the client"),
    LEASE_LOST("Contract 4 (lease lost)",
            "an attempt whose lease was taken over must get LeaseLostException when it finishes, and none of its finishing writes"
                    + " may be recorded; the new owner's result stands");

    private final String tag;
    private final String text;

    Promise(String tag, String text) {
        this.tag = tag;
        this.text = text;
    }

    /** @return the short name that starts every message, such as {@code Contract 3.3 (replay)} */
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
