package dev.idempotency.jdbc.lease;

import dev.idempotency.testsupport.TestDatabases;

/** The recovery worker on the PostgreSQL server of the environment. */
class PostgresRecoveryWorkerTest extends AbstractRecoveryWorkerTest {

    PostgresRecoveryWorkerTest() {
        super(TestDatabases::postgres);
    }
}
