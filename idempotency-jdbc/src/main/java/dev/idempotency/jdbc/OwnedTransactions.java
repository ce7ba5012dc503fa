package dev.idempotency.jdbc;

import dev.idempotency.jdbc.dialect.SqlDialect;
import dev.idempotency.jdbc.dialect.TableName;
import dev.idempotency.spi.ClaimRequest;
import dev.idempotency.spi.Completion;
import java.sql.Connection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The connections whose transaction {@link JdbcTransactions} runs, from its begin to its close, and
 * for each the completion that {@link JdbcIdempotencyStore#complete} left for the commit to send
 * (where the dialect sends a completion and the {@code COMMIT} in one round trip), or the
 * write-last record that {@link JdbcIdempotencyStore#writeLast} left to it. A caller's own
 * connection is never here: on it, the store records the result at once. Keyed by identity (pool
 * proxies do not override {@code equals}). Thread-safe.
 */
final class OwnedTransactions {

    private static final Map<Connection, Slot> OWNED = new ConcurrentHashMap<>();

    private OwnedTransactions() {
    }

    /** What one owned transaction's commit must send first, if anything. Used by one thread at a time. */
    static final class Slot {
        private SqlDialect dialect;
        private TableName table;
        private Completion completion;
        private ClaimRequest writeLast;

        /** @return whether a completion waits for the commit */
        boolean hasPending() {
            return completion != null;
        }

        SqlDialect dialect() {
            return dialect;
        }

        TableName table() {
            return table;
        }

        Completion completion() {
            return completion;
        }

        /** @return the request of a write-last record that waits for the commit, or {@code null} for a completion */
        ClaimRequest writeLast() {
            return writeLast;
        }

        void defer(SqlDialect d, TableName t, Completion c) {
            dialect = d;
            table = t;
            completion = c;
        }

        /** Forgets the deferred completion, once it has been sent. */
        void clear() {
            dialect = null;
            table = null;
            completion = null;
            writeLast = null;
        }

        void deferWriteLast(SqlDialect d, TableName t, ClaimRequest r, Completion c) {
            defer(d, t, c);
            writeLast = r;
        }
    }

    /** @param c a connection whose transaction {@link JdbcTransactions} has just begun */
    static void begin(Connection c) {
        OWNED.put(c, new Slot());
    }

    /** @param c a connection @return its slot while {@link JdbcTransactions} runs its transaction, else {@code null} */
    static Slot of(Connection c) {
        return OWNED.get(c);
    }

    /** @param c a connection whose transaction has ended @return its slot, or {@code null} */
    static Slot end(Connection c) {
        return OWNED.remove(c);
    }
}
