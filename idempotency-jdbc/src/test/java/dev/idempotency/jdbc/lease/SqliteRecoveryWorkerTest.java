package dev.idempotency.jdbc.lease;

import dev.idempotency.testsupport.TestDatabases;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;

/** The recovery worker on SQLite (a file in WAL mode). */
class SqliteRecoveryWorkerTest extends AbstractRecoveryWorkerTest {

    SqliteRecoveryWorkerTest() {
        super(() -> {
            try {
                return TestDatabases.pool(TestDatabases.sqliteUrl(Files.createTempDirectory("idempotency-sqlite").resolve("recovery.db"),
                        ""), null, null, 24);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }
}
