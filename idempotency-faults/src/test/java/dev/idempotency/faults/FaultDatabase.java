package dev.idempotency.faults;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.testsupport.DatabaseServer;
import dev.idempotency.testsupport.TestDatabases;
import java.nio.file.Path;
import java.util.List;

/**
 * A database the faults are injected into: where clients connect, and whether several processes may
 * open it at once.
 *
 * @param name for messages
 * @param url the JDBC URL
 * @param user the user, or {@code null}
 * @param password the password, or {@code null}
 * @param shared whether several processes may open it at the same time (an H2 file may not)
 */
record FaultDatabase(String name, String url, String user, String password, boolean shared) {

    /** @return the PostgreSQL server of the environment ({@code IDEMPOTENCY_PG_URL}, {@code _USER}, {@code _PASSWORD}) */
    static FaultDatabase postgres() {
        return server(DatabaseServer.postgres());
    }

    /** @return the MariaDB server of the environment ({@code IDEMPOTENCY_MARIADB_URL}, ...) */
    static FaultDatabase mariadb() {
        return server(DatabaseServer.mariadb());
    }

    /**
     * H2 in a file, with {@code WRITE_DELAY=0}: H2's default (500 ms) acknowledges commits before
     * they are written, and a killed process loses them (see docs/reliability.md).
     */
    static FaultDatabase h2File(Path dir) {
        return new FaultDatabase("H2 file", "jdbc:h2:file:" + dir.resolve("faults") + ";WRITE_DELAY=0;LOCK_TIMEOUT=10000", null, null, false);
    }

    /** @return SQLite in a file, in write-ahead-log mode, waiting up to 10 s for the write lock */
    static FaultDatabase sqliteFile(Path dir) {
        return new FaultDatabase("SQLite file", TestDatabases.sqliteUrl(dir.resolve("faults.db"), ""), null, null, true);
    }

    private static FaultDatabase server(DatabaseServer server) {
        return new FaultDatabase(server.name(), server.url(), server.user(), server.password(), true);
    }

    /** @return this database at another URL (through a proxy, on another port), same credentials */
    FaultDatabase at(String otherUrl) {
        return new FaultDatabase(name, otherUrl, user, password, shared);
    }

    /** @return the arguments a child JVM is given to reach it: the URL, the user and the password ({@code -} for none) */
    List<String> address() {
        return List.of(url, user == null ? "-" : user, password == null ? "-" : password);
    }

    HikariDataSource pool(int size) {
        return new HikariDataSource(config(size));
    }

    /** @return a pool that starts even if the database cannot be opened, and waits at most 1 s for a connection */
    HikariDataSource lazyPool(int size) {
        HikariConfig config = config(size);
        config.setInitializationFailTimeout(-1);
        config.setConnectionTimeout(1_000);
        return new HikariDataSource(config);
    }

    private HikariConfig config(int size) {
        return TestDatabases.config(url, user, password, size);
    }

    @Override
    public String toString() {
        return name;
    }
}
