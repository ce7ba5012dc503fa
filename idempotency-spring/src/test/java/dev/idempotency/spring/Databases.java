package dev.idempotency.spring;

import static org.junit.jupiter.api.Assertions.fail;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Assumptions;

/**
 * Pools for the tests: an in-memory H2 database, or the PostgreSQL server named by
 * {@code IDEMPOTENCY_PG_URL} (with {@code _USER} and {@code _PASSWORD}), which {@code scripts/test}
 * starts. Under CI ({@code CI=true}) a missing server fails the test; elsewhere it is skipped.
 */
final class Databases {

    private Databases() {
    }

    static HikariDataSource h2(String name) {
        return pool("jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000", null, null);
    }

    static HikariDataSource postgres() {
        String url = System.getenv("IDEMPOTENCY_PG_URL");
        if (url == null || url.isBlank()) {
            String message = "IDEMPOTENCY_PG_URL is not set: run the suite with scripts/test, which starts the server,"
                    + " or set IDEMPOTENCY_PG_URL, _USER and _PASSWORD to a server of your own";
            if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                fail(message);
            }
            Assumptions.abort(message);
        }
        return pool(url, System.getenv("IDEMPOTENCY_PG_USER"), System.getenv("IDEMPOTENCY_PG_PASSWORD"));
    }

    private static HikariDataSource pool(String url, String user, String password) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        if (user != null) {
            config.setUsername(user);
            config.setPassword(password);
        }
        config.setMaximumPoolSize(8);
        return new HikariDataSource(config);
    }
}
