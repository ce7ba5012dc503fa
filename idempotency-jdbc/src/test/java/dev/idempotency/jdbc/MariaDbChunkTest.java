package dev.idempotency.jdbc;

import dev.idempotency.testsupport.TestDatabases;
import java.sql.Connection;
import java.util.List;

/** Chunks on the MariaDB server of the environment. */
class MariaDbChunkTest extends AbstractChunkTest {

    MariaDbChunkTest() {
        super(TestDatabases::mariadb);
    }

    /** Overlapping workers at every isolation level a caller may choose. */
    @Override
    protected List<Integer> workerIsolationLevels() {
        return List.of(-1, Connection.TRANSACTION_READ_COMMITTED,
                Connection.TRANSACTION_REPEATABLE_READ, Connection.TRANSACTION_SERIALIZABLE);
    }
}
