package dev.idempotency.jdbc;

import dev.idempotency.testsupport.TestDatabases;
import java.sql.Connection;
import java.util.List;

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
