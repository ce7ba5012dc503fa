package dev.idempotency.jdbc.internal;

import dev.idempotency.jdbc.dialect.SqlDialect;
import dev.idempotency.jdbc.dialect.TableName;
import dev.idempotency.spi.Claim;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import java.util.function.IntFunction;
import org.jspecify.annotations.Nullable;

/**
 * The writes of a result, written once for every dialect: the completing {@code UPDATE}; a chunk's
 * completions (one statement of arrays, {@link SqlDialect#completionArrays}; statements of row sets,
 * {@link SqlDialect#completionRowSets}; else a JDBC batch); the write-last record, inserted first
 * where the dialect gives an insert for it ({@link SqlDialect#completedRecordInsertFirst}), else
 * claimed and completed; and the writes sent with the {@code COMMIT}: where the dialect gives a
 * statement that ends with its own {@code COMMIT} ({@link SqlDialect#completionWithCommit},
 * {@link SqlDialect#lastWriteWithCommit}), the write and the commit travel in one round trip; else the
 * write runs as usual and {@link Connection#commit()} follows.
 *
 * <p>Part of the executor ({@link JdbcExecutor}). Stateless and thread-safe.
 */
final class Completions {

    /** SQLState of a failure when the claimed record is not found (no data). */
    static final String RECORD_MISSING = "02000";

    /** Results per completing statement of a chunk, at most: well under MariaDB's default {@code max_allowed_packet}. */
    private static final long COMPLETION_STATEMENT_BYTES = 4L * 1024 * 1024;

    private Completions() {
    }

    /** @see JdbcExecutor#complete */
    static int complete(Connection c, TableName table, Completion done) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(Records.completionUpdate(table))) {
            Records.bindCompletion(s, done);
            return s.executeUpdate();
        }
    }

    /** @see JdbcExecutor#completeAll */
    static int completeAll(JdbcExecutor d, Connection c, TableName table, List<Completion> completions) throws SQLException {
        if (completions.isEmpty()) {
            return 0;
        }
        String arrays = d.dialect().completionArrays(table);
        if (arrays != null) {
            return completeInArrays(c, completions, arrays);
        }
        IntFunction<String> rowSets = d.dialect().completionRowSets(table);
        if (rowSets != null) {
            return completeInRowSets(c, completions, rowSets);
        }
        try (PreparedStatement s = c.prepareStatement(Records.completionUpdate(table))) {
            for (Completion done : completions) {
                Records.bindCompletion(s, done);
                s.addBatch();
            }
            int missing = 0;
            for (int count : s.executeBatch()) {
                if (count == 0) {
                    missing++;
                }
            }
            return missing;
        }
    }

    private static int completeInArrays(Connection c, List<Completion> completions, String sql) throws SQLException {
        byte[][] results = new byte[completions.size()][];
        for (int i = 0; i < results.length; i++) {
            results[i] = completions.get(i).result();
        }
        try (PreparedStatement s = c.prepareStatement(sql)) {
            s.setArray(1, Records.array(c, "varchar", completions, done -> done.key().scope()));
            s.setArray(2, Records.array(c, "varchar", completions, done -> done.key().id()));
            s.setArray(3, Records.array(c, "varchar", completions, done -> done.status().name()));
            s.setArray(4, Records.array(c, "varchar", completions, Completion::codec));
            s.setArray(5, c.createArrayOf("bytea", results));
            s.setArray(6, Records.array(c, "int8", completions, done -> done.completedAt().toEpochMilli()));
            s.setArray(7, Records.array(c, "int8", completions, done -> done.expiresAt().toEpochMilli()));
            return completions.size() - s.executeUpdate();
        }
    }

    /** Sets of at most 500 completions and 4 MiB of results, so that a statement stays well under a server's packet limit. */
    private static int completeInRowSets(Connection c, List<Completion> completions, IntFunction<String> sqlForRows)
            throws SQLException {
        int missing = 0;
        int from = 0;
        while (from < completions.size()) {
            int to = from;
            long bytes = 0;
            while (to < completions.size() && to - from < ChunkClaims.KEYS_PER_STATEMENT
                    && (to == from || bytes + resultBytes(completions.get(to)) <= COMPLETION_STATEMENT_BYTES)) {
                bytes += resultBytes(completions.get(to));
                to++;
            }
            List<Completion> set = completions.subList(from, to);
            from = to;
            try (PreparedStatement s = c.prepareStatement(sqlForRows.apply(set.size()))) {
                int p = 0;
                for (Completion done : set) {
                    s.setString(++p, done.key().scope());
                    s.setString(++p, done.key().id());
                    s.setString(++p, done.status().name());
                    s.setString(++p, done.codec());
                    Records.bindResult(s, ++p, done.result());
                    s.setLong(++p, done.completedAt().toEpochMilli());
                    s.setLong(++p, done.expiresAt().toEpochMilli());
                }
                missing += set.size() - s.executeUpdate();
            }
        }
        return missing;
    }

    private static long resultBytes(Completion done) {
        return done.result() == null ? 0 : done.result().length;
    }

    /** @see JdbcExecutor#completeAndCommit */
    static void completeAndCommit(JdbcExecutor d, Connection c, TableName table, Completion done) throws SQLException {
        String withCommit = d.dialect().completionWithCommit(table);
        if (withCommit == null) {
            if (complete(c, table, done) != 1) {
                throw new SQLException("the claimed record was not found", RECORD_MISSING);
            }
        } else {
            try (PreparedStatement s = c.prepareStatement(withCommit)) {
                Records.bindCompletion(s, done);
                s.execute();
            }
        }
        c.commit();
    }

    /**
     * The write-last record ({@link JdbcExecutor#writeLast}): the claim decides who wins a race, and
     * waits as it does; a dialect that inserts the completed record first costs one statement on a
     * first execution.
     */
    static Claim writeLast(JdbcExecutor d, Connection c, TableName table, ClaimRequest r, Completion done) throws SQLException {
        String insertFirst = d.dialect().completedRecordInsertFirst(table);
        if (insertFirst != null) {
            Claim written = insertCompletedRecord(d, c, insertFirst, r, done);
            if (written != null) {
                return written;
            }
        }
        Claim claim = d.claim(c, table, r);
        if (claim instanceof Claim.Acquired && complete(c, table, done) != 1) {
            throw new SQLException("the record claimed for the write-last completion was not found", RECORD_MISSING);
        }
        return claim;
    }

    /** @return acquired if inserted, busy if the lock wait ran out, {@code null} if the key has a record */
    private static @Nullable Claim insertCompletedRecord(JdbcExecutor d, Connection c, String sql, ClaimRequest r, Completion done)
            throws SQLException {
        try {
            return Savepoints.undoingFailure(c, d.dialect().failedStatementAbortsTransaction(), () -> {
                try (PreparedStatement s = c.prepareStatement(sql)) {
                    Records.bindCompletedRecord(s, r, done);
                    return d.writeOrNull(s, r.lockTimeout(), 1);
                }
            });
        } catch (SQLException e) {
            if (d.isDuplicateKey(e)) {
                return null;
            }
            throw e;
        }
    }

    /** @see JdbcExecutor#writeLastAndCommit */
    static Claim writeLastAndCommit(JdbcExecutor d, Connection c, TableName table, ClaimRequest r, Completion done)
            throws SQLException {
        String withCommit = d.dialect().lastWriteWithCommit(table, r.lockTimeout());
        if (withCommit == null) {
            Claim claim = writeLast(d, c, table, r, done);
            if (claim instanceof Claim.Acquired) {
                c.commit();
            }
            return claim;
        }
        try (PreparedStatement s = c.prepareStatement(withCommit)) {
            Records.bindCompletedRecord(s, r, done);
            s.setLong(10, r.now().toEpochMilli());
            s.execute();
        } catch (SQLException e) {
            boolean busy = d.isLockTimeout(e);
            if (!busy && !d.isRecordMissing(e)) {
                throw e;
            }
            c.rollback();
            if (busy) {
                return Claim.busy();
            }
            Records.Row found = Records.select(c, table, r.key(), "");
            if (found == null || !found.record().expiresAt().isAfter(d.judgedBy(c, found, r, false))) {
                throw new SQLException("the key's record changed between the refused write and its read", "40001", e);
            }
            return Claim.existing(found.record());
        }
        c.commit();
        return Claim.acquired();
    }
}
