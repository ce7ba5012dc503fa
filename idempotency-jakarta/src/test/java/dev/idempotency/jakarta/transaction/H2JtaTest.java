package dev.idempotency.jakarta.transaction;

import dev.idempotency.jakarta.testing.Jta;
import dev.idempotency.testsupport.TestDatabases;
import io.agroal.api.AgroalDataSource;

/** JTA on an in-memory H2 database. */
class H2JtaTest extends AbstractJtaTest {

    @Override
    AgroalDataSource dataSource() throws Exception {
        return Jta.dataSource(TestDatabases.h2Url("jakarta-jta"), null, null, 16);
    }
}
