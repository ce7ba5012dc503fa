package dev.idempotency.jdbc.lease;

import dev.idempotency.testsupport.TestDatabases;

/** Lease mode on the MariaDB server of the environment. */
class MariaDbLeaseModeTest extends AbstractLeaseModeTest {

    MariaDbLeaseModeTest() {
        super(TestDatabases::mariadb);
    }
}
