package dev.idempotency.http;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.testsupport.TestDatabases;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;

/**
 * The HTTP mapping on the PostgreSQL server of the environment ({@code IDEMPOTENCY_PG_URL},
 * {@code _USER}, {@code _PASSWORD}), which {@code scripts/test} starts; without it the class is skipped,
 * or fails under CI.
 */
class PostgresHttpTest extends AbstractHttpTest {

    private HikariDataSource pool;

    @Override
    DataSource dataSource() {
        pool = TestDatabases.postgres(20);
        return pool;
    }

    @AfterAll
    void closePool() {
        if (pool != null) {
            pool.close();
        }
    }
}
