package dev.idempotency.jdbc.lease;

import dev.idempotency.testsupport.TestDatabases;

/** Lease mode on embedded H2. */
class H2LeaseModeTest extends AbstractLeaseModeTest {

    H2LeaseModeTest() {
        super(() -> TestDatabases.h2("lease"));
    }
}
