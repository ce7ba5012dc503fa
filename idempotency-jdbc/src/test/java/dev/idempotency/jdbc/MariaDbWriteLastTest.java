package dev.idempotency.jdbc;

import dev.idempotency.testsupport.TestDatabases;

/** Write-last mode on MariaDb. */
class MariaDbWriteLastTest extends AbstractWriteLastTest {

    MariaDbWriteLastTest() {
        super(TestDatabases::mariadb);
    }
}
