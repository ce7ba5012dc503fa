package dev.idempotency.http;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;

/** The HTTP mapping on an in-memory H2 database. */
class H2HttpTest extends AbstractHttpTest {

    private HikariDataSource pool;

    @Override
    DataSource dataSource() {
        HikariConfig config = new HikariConfig();
        // LOCK_TIMEOUT: H2 ends a lock wait after 2 s by default, before the layer's 10-second lock timeout.
        config.setJdbcUrl("jdbc:h2:mem:http-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000");
        config.setMaximumPoolSize(20);
        pool = new HikariDataSource(config);
        return pool;
    }

    @AfterAll
    void closePool() {
        pool.close();
    }
}
