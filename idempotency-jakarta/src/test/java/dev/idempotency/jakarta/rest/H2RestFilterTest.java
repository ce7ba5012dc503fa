package dev.idempotency.jakarta.rest;

import dev.idempotency.jakarta.testing.Jta;
import dev.idempotency.testsupport.TestDatabases;
import io.agroal.api.AgroalDataSource;

/** The Jakarta REST filters on Jersey, over an in-memory H2 database. */
class H2RestFilterTest extends AbstractRestFilterTest {

    @Override
    protected AgroalDataSource dataSource() throws Exception {
        return Jta.dataSource(TestDatabases.h2Url("jakarta-rest"), null, null, 24);
    }
}
