package dev.idempotency.jdbc.lease;

import dev.idempotency.testsupport.TestDatabases;

/** The recovery worker on embedded H2. */
class H2RecoveryWorkerTest extends AbstractRecoveryWorkerTest {

    H2RecoveryWorkerTest() {
        super(() -> TestDatabases.h2("recovery"));
    }
}
