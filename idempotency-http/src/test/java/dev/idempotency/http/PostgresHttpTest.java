package dev.idempotency.http;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;

/**
 * The HTTP mapping on the PostgreSQL server of the environment ({@code IDEMPOTENCY_PG_URL},
 * {@code _USER}, {@code _PASSWORD}), which {@code scripts/test} starts.
 */
class PostgresHttpTest extends AbstractHttpTest {

    private HikariDataSource pool;

    @Override
    DataSource dataSource() {
        String url = System.getenv("IDEMPOTENCY_PG_URL");
        if (url == null) {
            throw new IllegalStateException("IDEMPOTENCY_PG_URL is not set: run the suite with scripts/test, which starts the server,"
                    + " or set IDEMPOTENCY_PG_URL, _USER and _PASSWORD to a server of your own");
        }
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setUsername(System.getenv("IDEMPOTENCY_PG_USER"));
        config.setPassword(System.getenv("IDEMPOTENCY_PG_PASSWORD"));
        config.setMaximumPoolSize(20);
        pool = new HikariDataSource(config);
        return pool;
    }

    @AfterAll
    void closePool() {
        if (pool != null) {
            pool.close();
        }
    }
}
