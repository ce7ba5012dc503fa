package dev.idempotency.examples.dialect;

import dev.idempotency.jdbc.dialect.ChunkClaiming;
import dev.idempotency.jdbc.dialect.SqlDialect;
import dev.idempotency.jdbc.dialect.SqlError;
import java.util.List;
import java.util.Optional;

/**
 * A dialect written in an application's own project, from the public description of
 * {@link SqlDialect} alone, with its DDL in the application's own resources: what a database the
 * library does not ship takes. It describes H2 (embedded, so that the example runs anywhere), as if
 * the library had no {@code H2Dialect}; give it to the store with
 * {@code JdbcIdempotencyStore.builder().dialect(new OwnDialect())}. {@code OwnDialectContractTest}
 * runs the testkit's whole contract on it.
 */
public final class OwnDialect extends SqlDialect {

    // tag::dialect[]
    @Override
    public String name() {
        return "H2 (a dialect of our own)";
    }

    /** The DDL, in this project's resources: read through this class, found in this project's jar. */
    @Override
    public String ddlResource() {
        return "dev/idempotency/examples/dialect/own-h2.sql";
    }

    /** Lease mode judges every lease by the database's clock, in epoch milliseconds. */
    @Override
    public String currentTimeMillisQuery() {
        return "SELECT CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP(3)) * 1000 AS BIGINT)";
    }

    /** H2 rolls a failed statement back alone: no savepoint is needed around a duplicate. */
    @Override
    public boolean failedStatementAbortsTransaction() {
        return false;
    }

    /** One key at a time: H2 scans a scope's records for a long {@code IN} list. */
    @Override
    public ChunkClaiming chunkClaiming() {
        return ChunkClaiming.KEY_BY_KEY;
    }

    /** H2's own codes for a missing table, besides the standard 42S02; 90097 for a read-only database. */
    @Override
    public boolean isMissingTable(SqlError e) {
        return e.hasState("42S03") || e.hasState("42S04") || super.isMissingTable(e);
    }

    @Override
    public boolean isReadOnly(SqlError e) {
        return e.vendorCode() == 90097 || super.isReadOnly(e);
    }

    /** Durability: one query, judged by a pure function of its answer. */
    @Override
    public List<String> durabilityQueries() {
        return List.of("SELECT SETTING_VALUE FROM INFORMATION_SCHEMA.SETTINGS WHERE SETTING_NAME = 'WRITE_DELAY'");
    }

    @Override
    public Optional<String> nonDurableCommits(List<String> answers) {
        String delay = answers.get(0);
        return delay == null || delay.strip().equals("0") ? Optional.empty()
                : Optional.of("H2 WRITE_DELAY=" + delay.strip() + ": add ;WRITE_DELAY=0 to the JDBC URL");
    }
    // end::dialect[]
}
