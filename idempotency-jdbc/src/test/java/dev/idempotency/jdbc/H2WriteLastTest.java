package dev.idempotency.jdbc;

import dev.idempotency.testsupport.TestDatabases;

/** Write-last mode on H2. */
class H2WriteLastTest extends AbstractWriteLastTest {

    H2WriteLastTest() {
        super(() -> TestDatabases.h2("writelast"));
    }
}
