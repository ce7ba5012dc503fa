package dev.idempotency.examples.dialect;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.jdbc.dialect.SqlDialect;
import dev.idempotency.jdbc.dialect.SqlError;
import dev.idempotency.jdbc.dialect.TableName;
import java.util.Optional;

/**
 * Apache Derby 10.16, a database the library does not ship, described in an application's own
 * project from the public description of {@link SqlDialect} alone, with its DDL in the
 * application's own resources; give it to the store with
 * {@code JdbcIdempotencyStore.builder().dialect(new DerbyDialect())}. It needs nothing of Derby's
 * classes. {@code DerbyDialectContractTest} runs the testkit's whole contract on an embedded Derby.
 *
 * <p>Derby rolls a failed statement back alone, so a duplicate key (23505) leaves the transaction
 * usable. But a lock wait that runs out (40XL1) and a deadlock (40001) roll back the whole
 * transaction: the claim cannot go on in it, so both are read as a transaction conflict (the
 * retryable {@code TransactionConflictException}), never as a lock timeout that answers
 * {@code InProgress}. Derby does not end a lock wait at the query timeout; the wait is bounded by
 * the database property {@code derby.locks.waitTimeout} (seconds), not by the policy's lock timeout.
 *
 * <p>Derby has no {@code CREATE TABLE IF NOT EXISTS}: its DDL runs once, where the table is missing.
 * Text compares with padding ({@code 'a' = 'a '}), so keys that end in a space are refused.
 * Results are a {@code BLOB(16M)}.
 */
public final class DerbyDialect extends SqlDialect {

    @Override
    public String name() {
        return "Apache Derby (a dialect of our own)";
    }

    /** The DDL, in this project's resources; it declares the clock function below. */
    @Override
    public String ddlResource() {
        return "dev/idempotency/examples/dialect/derby.sql";
    }

    // tag::derby[]
    /** The Java function that the DDL declares: {@code System.currentTimeMillis()}, run by Derby. */
    @Override
    public String currentTimeMillisQuery() {
        return "VALUES idempotency_now_millis()";
    }

    /** Derby's lock timeout ends the transaction: never an {@code InProgress} that goes on in it. */
    @Override
    public boolean isLockTimeout(SqlError e) {
        return false;
    }
    // end::derby[]

    /** A duplicate fails its statement alone; 40XL1 and 40001 roll back the whole transaction. */
    @Override
    public boolean failedStatementAbortsTransaction() {
        return false;
    }

    /** Derby's DELETE has no LIMIT, nor row values: the batch is a correlated subquery. */
    @Override
    public String purgeStatement(TableName table, int limit, String expired, String only) {
        return "DELETE FROM " + table + " WHERE EXISTS (SELECT 1 FROM (SELECT scope, key_id FROM " + table + " WHERE "
                + expired + only + " ORDER BY expires_at FETCH FIRST " + limit + " ROWS ONLY) b"
                + " WHERE b.scope = " + table + ".scope AND b.key_id = " + table + ".key_id) AND " + expired;
    }

    /** 42X05: the table does not exist. */
    @Override
    public boolean isMissingTable(SqlError e) {
        return e.hasState("42X05") || super.isMissingTable(e);
    }

    /** 25502: a write in a read-only connection or database. */
    @Override
    public boolean isReadOnly(SqlError e) {
        return e.hasState("25502") || super.isReadOnly(e);
    }

    @Override
    public Optional<String> keyRefusal(IdempotencyKey key) {
        return key.scope().endsWith(" ") || key.id().endsWith(" ")
                ? Optional.of("Derby compares text with padding, so a key ending in a space would match the same key"
                        + " without that space; such keys are refused")
                : Optional.empty();
    }
}
