package dev.idempotency.jdbc;

import dev.idempotency.testsupport.TestDatabases;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;

/** Chunks on SQLite (a file in WAL mode): one writer at a time. */
class SqliteChunkTest extends AbstractChunkTest {

    SqliteChunkTest() {
        super(() -> {
            try {
                return TestDatabases.pool(TestDatabases.sqliteUrl(Files.createTempDirectory("idempotency-sqlite").resolve("chunk.db"), ""),
                        null, null, 24);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    /** SQLite claims key by key, writing first: 20 upserts and the batch. */
    @Override
    protected int statementsPerFirstChunkOf20() {
        return 20 * (SqliteStoreTest.STATEMENTS_PER_FIRST_EXECUTION - 1) + 1;
    }

    /** A replayed chunk: one claim per key, as a replay of {@code execute} costs. */
    @Override
    protected int statementsPerReplayedChunkOf20() {
        return 20 * SqliteStoreTest.STATEMENTS_PER_REPLAY;
    }

    /** SQLite: the open writer holds the database's one write lock, so no other key can be claimed either. */
    @Override
    protected boolean otherKeysFreeWhileOneIsHeld() {
        return false;
    }
}
