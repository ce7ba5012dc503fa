package dev.idempotency.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import javax.sql.DataSource;

/** Chunks on in-memory HSQLDB in MVCC mode, which claims a chunk key by key. */
class HsqldbChunkTest extends AbstractChunkTest {

    private HikariDataSource pool;

    @Override
    protected DataSource dataSource() {
        if (pool == null) {
            pool = TestDatabases.pool("jdbc:hsqldb:mem:chunk;hsqldb.tx=mvcc", "SA", "", 24);
        }
        return pool;
    }

    /** HSQLDB claims key by key (MERGE): 20 claims, each a SELECT and a MERGE, and the batch. */
    @Override
    protected int statementsPerFirstChunkOf20() {
        return 20 * HsqldbStoreTest.STATEMENTS_PER_FIRST_EXECUTION - 20 + 1;
    }

    @Override
    protected int statementsPerReplayedChunkOf20() {
        return 20 * HsqldbStoreTest.STATEMENTS_PER_REPLAY;
    }

    @Override
    protected void closeDataSource() {
        if (pool != null) {
            pool.close();
        }
    }
}
