package dev.idempotency.jdbc.kit;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.testsupport.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import org.junit.jupiter.api.AfterAll;

/** The store contract on SQLite, in a temporary file in write-ahead-log mode. */
class SqliteContractTest extends JdbcStoreContract {

    private Path dir;

    @Override
    HikariDataSource createPool() throws Exception {
        dir = Files.createTempDirectory("idempotency-kit-sqlite");
        HikariDataSource pool = TestDatabases.pool("jdbc:sqlite:" + dir.resolve("kit.db"), null, null, 8);
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute("PRAGMA journal_mode=WAL");
        }
        return pool;
    }

    @AfterAll
    void deleteFiles() throws Exception {
        if (dir != null) {
            try (var files = Files.list(dir)) {
                for (Path p : files.toList()) {
                    Files.deleteIfExists(p);
                }
            }
            Files.deleteIfExists(dir);
        }
    }
}
