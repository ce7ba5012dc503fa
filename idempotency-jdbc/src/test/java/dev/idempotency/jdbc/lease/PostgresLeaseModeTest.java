package dev.idempotency.jdbc.lease;

import dev.idempotency.testsupport.TestDatabases;

/** Lease mode on the PostgreSQL server of the environment. */
class PostgresLeaseModeTest extends AbstractLeaseModeTest {

    PostgresLeaseModeTest() {
        super(TestDatabases::postgres);
    }
}
