package dev.idempotency.jakarta.servlet;

import dev.idempotency.jakarta.testing.Jta;
import dev.idempotency.testsupport.DatabaseServer;
import io.agroal.api.AgroalDataSource;

/**
 * The servlet filter on Jetty, over the PostgreSQL server of the environment
 * ({@code IDEMPOTENCY_PG_URL}, {@code _USER}, {@code _PASSWORD}); without it the class is skipped, or
 * fails under CI.
 */
class PostgresServletFilterTest extends AbstractServletFilterTest {

    @Override
    protected AgroalDataSource dataSource() throws Exception {
        DatabaseServer pg = DatabaseServer.postgres();
        return Jta.dataSource(pg.url(), pg.user(), pg.password(), 24);
    }
}
