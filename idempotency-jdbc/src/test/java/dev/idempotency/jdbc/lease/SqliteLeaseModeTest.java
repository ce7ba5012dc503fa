package dev.idempotency.jdbc.lease;

import dev.idempotency.testsupport.TestDatabases;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;

/** Lease mode on SQLite (a file in WAL mode), whose single writer turns every conflict into a wait. */
class SqliteLeaseModeTest extends AbstractLeaseModeTest {

    SqliteLeaseModeTest() {
        super(() -> {
            try {
                return TestDatabases.pool(TestDatabases.sqliteUrl(Files.createTempDirectory("idempotency-sqlite").resolve("lease.db"), ""),
                        null, null, 24);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }
}
