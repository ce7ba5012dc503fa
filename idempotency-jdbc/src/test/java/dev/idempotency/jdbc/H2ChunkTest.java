package dev.idempotency.jdbc;


/** Chunks on embedded H2. */
class H2ChunkTest extends AbstractChunkTest {

    H2ChunkTest() {
        super(() -> TestDatabases.h2("chunk"));
    }

    /** H2 claims key by key: 20 claims, each a SELECT and an INSERT, and the batch. */
    @Override
    protected int statementsPerFirstChunkOf20() {
        return 20 * (H2StoreTest.STATEMENTS_PER_FIRST_EXECUTION - 1) + 1;
    }

    /** A replayed chunk: one claim per key, as a replay of {@code execute} costs. */
    @Override
    protected int statementsPerReplayedChunkOf20() {
        return 20 * H2StoreTest.STATEMENTS_PER_REPLAY;
    }
}
