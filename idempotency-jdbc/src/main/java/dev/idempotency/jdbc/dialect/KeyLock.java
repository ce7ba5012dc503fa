package dev.idempotency.jdbc.dialect;

/**
 * A transaction-scoped lock on one key, taken before {@link ClaimStrategy#KEY_LOCK_FIRST} reads the
 * key's record, and held until the claimer's transaction ends.
 *
 * @param query a query that binds the key's scope (1) and id (2), takes the lock (its wait bounded
 *     as {@link SqlDialect#lockWait()} says) and returns one row whose first column names the
 *     transaction's isolation level
 * @param isolation the only level under which the lock serialises the claimers (compared ignoring
 *     case): under another, a snapshot taken before the lock could hide the record, and the claim is
 *     refused (SQLState 0A000)
 */
public record KeyLock(String query, String isolation) {
}
