package dev.idempotency.jdbc;

import static org.junit.jupiter.api.Assertions.fail;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Assumptions;

/**
 * Pooled data sources on every database the tests run against. Embedded engines are created here;
 * PostgreSQL and MariaDB are the servers named by {@code IDEMPOTENCY_PG_URL} and
 * {@code IDEMPOTENCY_MARIADB_URL} (with {@code _USER} and {@code _PASSWORD}), which
 * {@code scripts/test} starts. Under CI ({@code CI=true}) a missing server fails the test; elsewhere
 * it is skipped with a message saying how to provide it.
 */
public final class TestDatabases {

    private TestDatabases() {
    }

    /** @param name a database name unique to the caller @return an in-memory H2 pool */
    public static HikariDataSource h2(String name) {
        return pool("jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000", null, null, 24);
    }

    /** @return a pool on the PostgreSQL server of the environment */
    public static HikariDataSource postgres() {
        return server("IDEMPOTENCY_PG");
    }

    /** @return a pool on the MariaDB server of the environment */
    public static HikariDataSource mariadb() {
        return server("IDEMPOTENCY_MARIADB");
    }

    /**
     * @param url a JDBC URL
     * @param user the user, or {@code null}
     * @param password the password, or {@code null}
     * @param size the pool size
     * @return a pool
     */
    public static HikariDataSource pool(String url, String user, String password, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        if (user != null) {
            config.setUsername(user);
            config.setPassword(password);
        }
        config.setMaximumPoolSize(size);
        config.setConnectionTimeout(30_000);
        return new HikariDataSource(config);
    }

    private static HikariDataSource server(String prefix) {
        String url = System.getenv(prefix + "_URL");
        if (url == null || url.isBlank()) {
            String message = prefix + "_URL is not set: run the suite with scripts/test, which starts the server,"
                    + " or set " + prefix + "_URL, _USER and _PASSWORD to a server of your own";
            if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                fail(message);
            }
            Assumptions.abort(message);
        }
        return pool(url, System.getenv(prefix + "_USER"), System.getenv(prefix + "_PASSWORD"), 24);
    }
}
