package dev.idempotency.jdbc.jdbi;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.jdbc.TestDatabases;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/** The Jdbi adapter on the PostgreSQL server of the environment ({@code IDEMPOTENCY_PG_URL}). */
class PostgresJdbiTest extends AbstractJdbiTest {

    @Override
    HikariDataSource createPool() {
        return TestDatabases.postgres();
    }

    /** The table as {@code ddl/postgresql.sql} defines it, until that resource is on this branch. */
    @Override
    void createTable(HikariDataSource pool, JdbcIdempotencyStore store) {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + TABLE);
            s.execute("CREATE TABLE " + TABLE + " (scope VARCHAR(64) COLLATE \"C\" NOT NULL,"
                    + " key_id VARCHAR(255) COLLATE \"C\" NOT NULL, fingerprint VARCHAR(64) NOT NULL, status VARCHAR(16) NOT NULL,"
                    + " result_codec VARCHAR(64), result BYTEA, created_at BIGINT NOT NULL, completed_at BIGINT,"
                    + " expires_at BIGINT NOT NULL, lease_until BIGINT, owner_token VARCHAR(64),"
                    + " attempts INTEGER DEFAULT 1 NOT NULL, PRIMARY KEY (scope, key_id))");
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
