package dev.idempotency.jdbc;


/** Chunks on the MariaDB server of the environment. */
class MariaDbChunkTest extends AbstractChunkTest {

    MariaDbChunkTest() {
        super(TestDatabases::mariadb);
    }
}
