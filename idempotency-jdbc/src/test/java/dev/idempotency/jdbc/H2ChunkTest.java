package dev.idempotency.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import javax.sql.DataSource;

/** Chunks on embedded H2. */
class H2ChunkTest extends AbstractChunkTest {

    private HikariDataSource pool;

    @Override
    protected DataSource dataSource() {
        if (pool == null) {
            pool = TestDatabases.h2("chunk");
        }
        return pool;
    }

    /** H2 claims key by key: 20 claims, each a SELECT and an INSERT, and the batch. */
    @Override
    protected int statementsPerFirstChunkOf20() {
        return 20 * (H2StoreTest.STATEMENTS_PER_FIRST_EXECUTION - 1) + 1;
    }

    @Override
    protected int statementsPerReplayedChunkOf20() {
        return 20 * H2StoreTest.STATEMENTS_PER_REPLAY;
    }

    @Override
    protected void closeDataSource() {
        if (pool != null) {
            pool.close();
        }
    }
}
