package dev.idempotency.jakarta.servlet;

import dev.idempotency.jakarta.testing.Jta;
import dev.idempotency.testsupport.TestDatabases;
import io.agroal.api.AgroalDataSource;

/** The servlet filter on Jetty, over an in-memory H2 database. */
class H2ServletFilterTest extends AbstractServletFilterTest {

    @Override
    protected AgroalDataSource dataSource() throws Exception {
        return Jta.dataSource(TestDatabases.h2Url("jakarta-servlet"), null, null, 24);
    }
}
