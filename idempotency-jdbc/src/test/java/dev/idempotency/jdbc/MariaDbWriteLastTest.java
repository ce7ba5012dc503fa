package dev.idempotency.jdbc;

/** Write-last mode on MariaDb. */
class MariaDbWriteLastTest extends AbstractWriteLastTest {

    MariaDbWriteLastTest() {
        super(TestDatabases::mariadb);
    }
}
