package dev.idempotency.jdbc.kit;

import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.jdbc.dialect.SqlDialect;
import dev.idempotency.testsupport.TestDatabase;

/**
 * The store contract with the base {@link SqlDialect} alone, as a dialect of one's own starts (a
 * name and the DDL, nothing overridden), on the PostgreSQL server of the environment. PostgreSQL
 * aborts the whole transaction when one statement fails, so this runs the base's savepoint around
 * each insert that may meet a duplicate (the single claim's and the chunk's multi-row insert), its
 * lock wait bounded by the driver's query timeout, its batch of completions and its reading of the
 * database's clock: paths that no built-in dialect takes, since each overrides them.
 */
class BaseDialectOnPostgresContractTest extends JdbcStoreContract {

    /** The base dialect with PostgreSQL's DDL. */
    static final class BaseDialect extends SqlDialect {
        @Override
        public String name() {
            return "the base dialect on PostgreSQL";
        }

        @Override
        public String ddlResource() {
            return "dev/idempotency/jdbc/ddl/postgresql.sql";
        }
    }

    BaseDialectOnPostgresContractTest() {
        super(TestDatabase.POSTGRES);
    }

    @Override
    protected JdbcIdempotencyStore.Builder configure(JdbcIdempotencyStore.Builder store) {
        return store.table("idempotency_kit_base").dialect(new BaseDialect());
    }
}
