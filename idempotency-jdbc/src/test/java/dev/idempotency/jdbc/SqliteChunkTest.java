package dev.idempotency.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import javax.sql.DataSource;

/** Chunks on SQLite (a file in WAL mode): one writer at a time. */
class SqliteChunkTest extends AbstractChunkTest {

    private HikariDataSource pool;

    @Override
    protected DataSource dataSource() {
        if (pool == null) {
            try {
                pool = TestDatabases.pool(SqliteStoreTest.url(java.nio.file.Files.createTempDirectory("idempotency-sqlite").resolve("chunk.db"), ""), null, null, 24);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        return pool;
    }

    /** SQLite claims key by key, writing first: 20 upserts and the batch. */
    @Override
    protected int statementsPerFirstChunkOf20() {
        return 20 * (SqliteStoreTest.STATEMENTS_PER_FIRST_EXECUTION - 1) + 1;
    }

    @Override
    protected int statementsPerReplayedChunkOf20() {
        return 20 * SqliteStoreTest.STATEMENTS_PER_REPLAY;
    }

    @Override
    protected void closeDataSource() {
        if (pool != null) {
            pool.close();
        }
    }
}
