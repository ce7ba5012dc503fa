package dev.idempotency.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import javax.sql.DataSource;

/** Chunks on the PostgreSQL server of the environment. */
class PostgresChunkTest extends AbstractChunkTest {

    private HikariDataSource pool;

    @Override
    protected DataSource dataSource() {
        if (pool == null) {
            pool = TestDatabases.postgres();
        }
        return pool;
    }

    /** PostgreSQL writes first: the INSERT ... RETURNING that claims every key, and the completing UPDATE. */
    @Override
    protected int statementsPerFirstChunkOf20() {
        return 2;
    }

    /** A replay: the INSERT that claims nothing, and the SELECT of the keys it did not insert. */
    @Override
    protected int statementsPerReplayedChunkOf20() {
        return 2;
    }

    @Override
    protected void closeDataSource() {
        if (pool != null) {
            pool.close();
        }
    }
}
