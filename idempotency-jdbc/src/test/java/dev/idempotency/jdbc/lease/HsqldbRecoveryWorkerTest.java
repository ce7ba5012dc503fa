package dev.idempotency.jdbc.lease;

import dev.idempotency.testsupport.TestDatabases;

/** The recovery worker on in-memory HSQLDB. */
class HsqldbRecoveryWorkerTest extends AbstractRecoveryWorkerTest {

    HsqldbRecoveryWorkerTest() {
        super(() -> TestDatabases.hsqldb("recovery", 24));
    }
}
