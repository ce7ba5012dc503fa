package dev.idempotency.jdbc;


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
}
