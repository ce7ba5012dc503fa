package dev.idempotency.jdbc;

import dev.idempotency.testsupport.TestDatabases;

/** Chunks on in-memory HSQLDB in MVCC mode, which claims a chunk key by key. */
class HsqldbChunkTest extends AbstractChunkTest {

    HsqldbChunkTest() {
        super(() -> TestDatabases.hsqldb("chunk", 24));
    }

    /** HSQLDB claims key by key (MERGE): 20 claims, each a SELECT and a MERGE, and the batch. */
    @Override
    protected int statementsPerFirstChunkOf20() {
        return 20 * HsqldbStoreTest.STATEMENTS_PER_FIRST_EXECUTION - 20 + 1;
    }

    /** A replayed chunk: one claim per key, as a replay of {@code execute} costs. */
    @Override
    protected int statementsPerReplayedChunkOf20() {
        return 20 * HsqldbStoreTest.STATEMENTS_PER_REPLAY;
    }
}
