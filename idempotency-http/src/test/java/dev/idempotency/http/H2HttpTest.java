package dev.idempotency.http;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.testsupport.TestDatabases;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;

/** The HTTP mapping on an in-memory H2 database. */
class H2HttpTest extends AbstractHttpTest {

    private HikariDataSource pool;

    @Override
    DataSource dataSource() {
        // LOCK_TIMEOUT (10 s in the URL): H2 ends a lock wait after 2 s by default, before the layer's 10-second lock timeout.
        pool = TestDatabases.h2("http-" + UUID.randomUUID(), 20);
        return pool;
    }

    @AfterAll
    void closePool() {
        pool.close();
    }
}
