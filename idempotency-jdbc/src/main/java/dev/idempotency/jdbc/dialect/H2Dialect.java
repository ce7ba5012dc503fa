package dev.idempotency.jdbc.dialect;

/**
 * H2 2.x. Uses the standard claim of {@link SqlDialect}: a first execution costs a {@code SELECT},
 * an {@code INSERT} and an {@code UPDATE}; a replay costs one {@code SELECT}.
 *
 * <p>H2 rolls back a failed statement alone, so a duplicate-key insert (a concurrent claim that
 * committed) is met without a savepoint and leaves the transaction usable. A concurrent claim that
 * is still open is waited for up to the policy's lock timeout (as a query timeout, restored
 * afterwards) and at most H2's own {@code LOCK_TIMEOUT} (2 seconds unless the URL or session sets
 * it), whichever ends first; either gives {@code InProgress}, and the transaction stays usable.
 *
 * <p>Stateless and thread-safe.
 */
public class H2Dialect extends SqlDialect {

    @Override
    public String name() {
        return "H2";
    }

    @Override
    protected String currentTimeMillisQuery() {
        return "SELECT CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP(3)) * 1000 AS BIGINT)";
    }

    @Override
    protected boolean failedStatementAbortsTransaction() {
        return false;
    }
}
