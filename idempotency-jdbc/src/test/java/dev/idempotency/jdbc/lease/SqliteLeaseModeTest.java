package dev.idempotency.jdbc.lease;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.jdbc.SqliteStoreTest;
import dev.idempotency.jdbc.TestDatabases;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import javax.sql.DataSource;

/** Lease mode on SQLite (a file in WAL mode), whose single writer turns every conflict into a wait. */
class SqliteLeaseModeTest extends AbstractLeaseModeTest {

    private HikariDataSource pool;

    @Override
    protected DataSource dataSource() {
        if (pool == null) {
            try {
                pool = TestDatabases.pool(SqliteStoreTest.url(Files.createTempDirectory("idempotency-sqlite").resolve("lease.db"), ""),
                        null, null, 24);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return pool;
    }

    @Override
    protected void closeDataSource() {
        if (pool != null) {
            pool.close();
        }
    }
}
