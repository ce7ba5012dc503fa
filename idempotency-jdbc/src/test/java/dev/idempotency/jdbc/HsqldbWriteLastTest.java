package dev.idempotency.jdbc;

import dev.idempotency.testsupport.TestDatabases;

/** Write-last mode on Hsqldb. */
class HsqldbWriteLastTest extends AbstractWriteLastTest {

    HsqldbWriteLastTest() {
        super(() -> TestDatabases.hsqldb("writelast", 24));
    }
}
