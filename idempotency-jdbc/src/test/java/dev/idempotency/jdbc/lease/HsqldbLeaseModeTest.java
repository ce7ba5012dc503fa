package dev.idempotency.jdbc.lease;

import dev.idempotency.testsupport.TestDatabases;

/** Lease mode on in-memory HSQLDB in MVCC mode. */
class HsqldbLeaseModeTest extends AbstractLeaseModeTest {

    HsqldbLeaseModeTest() {
        super(() -> TestDatabases.hsqldb("lease", 24));
    }
}
