package dev.idempotency.jdbc;

/** Write-last mode on H2. */
class H2WriteLastTest extends AbstractWriteLastTest {

    H2WriteLastTest() {
        super(() -> TestDatabases.h2("writelast"));
    }
}
