package dev.idempotency.jdbc.lease;

import dev.idempotency.testsupport.TestDatabases;

/** The recovery worker on the MariaDB server of the environment. */
class MariaDbRecoveryWorkerTest extends AbstractRecoveryWorkerTest {

    MariaDbRecoveryWorkerTest() {
        super(TestDatabases::mariadb);
    }
}
