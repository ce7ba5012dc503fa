package dev.idempotency.jakarta.transaction;

import dev.idempotency.jakarta.testing.Jta;
import dev.idempotency.testsupport.DatabaseServer;
import io.agroal.api.AgroalDataSource;

/**
 * JTA on the PostgreSQL server of the environment ({@code IDEMPOTENCY_PG_URL}, {@code _USER},
 * {@code _PASSWORD}); without it the class is skipped, or fails under CI.
 */
class PostgresJtaTest extends AbstractJtaTest {

    @Override
    AgroalDataSource dataSource() throws Exception {
        DatabaseServer pg = DatabaseServer.postgres();
        return Jta.dataSource(pg.url(), pg.user(), pg.password(), 16);
    }
}
