package dev.idempotency.jdbc;

import dev.idempotency.testsupport.TestDatabases;
import java.sql.Connection;
import java.util.List;

/** Chunks on the PostgreSQL server of the environment. */
class PostgresChunkTest extends AbstractChunkTest {

    PostgresChunkTest() {
        super(TestDatabases::postgres);
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

    /** Overlapping workers at every isolation level a caller may choose. */
    @Override
    protected List<Integer> workerIsolationLevels() {
        return List.of(-1, Connection.TRANSACTION_READ_COMMITTED,
                Connection.TRANSACTION_REPEATABLE_READ, Connection.TRANSACTION_SERIALIZABLE);
    }

    @Override
    protected boolean lockWaitsEndToTheMillisecond() {
        return true;
    }
}
