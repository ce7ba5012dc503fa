package dev.idempotency.jdbc.kit;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.jdbc.dialect.PartitionedPostgresDialect;
import dev.idempotency.testsupport.TestDatabases;

/**
 * The store contract on the PostgreSQL server of the environment, with the record table partitioned
 * by expiry day ({@link PartitionedPostgresDialect}). No day partition is created: every record lands
 * in the default partition, and the key's uniqueness rests on the dialect's lock alone.
 */
class PartitionedPostgresContractTest extends JdbcStoreContract {
    @Override
    HikariDataSource createPool() {
        return TestDatabases.postgres();
    }

    @Override
    JdbcIdempotencyStore.Builder configure(JdbcIdempotencyStore.Builder store) {
        return store.table("idempotency_kit_by_day").dialect(new PartitionedPostgresDialect());
    }
}
