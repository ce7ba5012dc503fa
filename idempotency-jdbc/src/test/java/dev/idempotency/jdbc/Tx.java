package dev.idempotency.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/** Test helper: runs a block in a fresh transaction that it commits, or rolls back on failure. */
final class Tx {
    private Tx() {
    }

    interface Block<T> {
        T run(Connection c) throws Exception;
    }

    static <T> T commit(DataSource ds, Block<T> block) throws Exception {
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            try {
                T result = block.run(c);
                c.commit();
                return result;
            } catch (Exception | Error e) {
                c.rollback();
                throw e;
            }
        }
    }

    static <T> T rollback(DataSource ds, Block<T> block) throws Exception {
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            try {
                return block.run(c);
            } finally {
                c.rollback();
            }
        }
    }

    static int count(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); var s = c.createStatement(); var rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getInt(1);
        }
    }

    /** @return the first column of the query's first row, read on the caller's own connection */
    static String text(Connection c, String sql) throws SQLException {
        try (var s = c.createStatement(); var rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
