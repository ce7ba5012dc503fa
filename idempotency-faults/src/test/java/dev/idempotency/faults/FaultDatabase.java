package dev.idempotency.faults;

import static org.junit.jupiter.api.Assertions.fail;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;

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
        return server("PostgreSQL", "IDEMPOTENCY_PG");
    }

    /** @return the MariaDB server of the environment ({@code IDEMPOTENCY_MARIADB_URL}, ...) */
    static FaultDatabase mariadb() {
        return server("MariaDB", "IDEMPOTENCY_MARIADB");
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
        return new FaultDatabase("SQLite file", "jdbc:sqlite:" + dir.resolve("faults.db") + "?journal_mode=WAL&busy_timeout=10000", null, null, true);
    }

    private static FaultDatabase server(String name, String prefix) {
        String url = System.getenv(prefix + "_URL");
        if (url == null || url.isBlank()) {
            String message = prefix + "_URL is not set: run the suite with scripts/test, which starts the server,"
                    + " or set " + prefix + "_URL, _USER and _PASSWORD to a server of your own";
            if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                fail(message);
            }
            Assumptions.abort(message);
        }
        return new FaultDatabase(name, url, System.getenv(prefix + "_USER"), System.getenv(prefix + "_PASSWORD"), true);
    }

    /** @return this database at another URL (through a proxy, on another port), same credentials */
    FaultDatabase at(String otherUrl) {
        return new FaultDatabase(name, otherUrl, user, password, shared);
    }

    HikariDataSource pool(int size) {
        return new HikariDataSource(config(size));
    }

    /** @return a pool that starts even if the database cannot be opened, and waits at most 2 s for a connection */
    HikariDataSource lazyPool(int size) {
        HikariConfig config = config(size);
        config.setInitializationFailTimeout(-1);
        config.setConnectionTimeout(2_000);
        return new HikariDataSource(config);
    }

    private HikariConfig config(int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        if (user != null) {
            config.setUsername(user);
            config.setPassword(password);
        }
        config.setMaximumPoolSize(size);
        config.setConnectionTimeout(30_000);
        return config;
    }

    @Override
    public String toString() {
        return name;
    }
}
