package dev.idempotency.jdbc.internal;

import java.sql.SQLException;
import org.jspecify.annotations.Nullable;

/**
 * The rounds of a claim, written once for every dialect and for lease claims. A round reads or
 * writes the key's record and either decides the claim, or finds that the record changed under it
 * (a concurrent claimer committed while the round waited, a record vanished between its read and
 * its write), and the claim then runs another round, with a fresh look at the record. A record that
 * still changes after {@value #ROUNDS} rounds fails the claim with SQLState 40001, a conflict that
 * the caller retries whole. A lock wait that runs out decides the claim as busy
 * ({@link #busyOnLockTimeout}), by the dialect's classification of the failure.
 *
 * <p>Part of the executor ({@link JdbcExecutor}). Stateless and thread-safe.
 */
public final class ClaimRounds {

    /** The most rounds of one claim. */
    public static final int ROUNDS = 3;

    /** What a claim that no round decided says (SQLState 40001). */
    public static final String KEPT_CHANGING = "the key's record kept changing under concurrent claims";

    /** What a read-first claim that no round decided says (SQLState 40001). */
    public static final String KEPT_CHANGING_IN_SNAPSHOT = KEPT_CHANGING + "; the transaction's snapshot cannot see the committed"
            + " record";

    private ClaimRounds() {
    }

    /**
     * One round of a claim.
     *
     * @param <T> the claim
     */
    @FunctionalInterface
    interface Round<T> {
        /**
         * @param round the round, from 0
         * @return the claim, or {@code null} if the record changed under this round and another must look again
         * @throws SQLException if a statement fails
         */
        @Nullable T run(int round) throws SQLException;
    }

    /**
     * Runs rounds until one decides the claim, at most {@value #ROUNDS}.
     *
     * @param keptChanging what the failure says if no round decides
     * @param round one round
     * @param <T> the claim
     * @return the claim the deciding round returned
     * @throws SQLException if a round fails, or, with SQLState 40001, if no round decides
     */
    static <T> T repeat(String keptChanging, Round<T> round) throws SQLException {
        for (int i = 0; i < ROUNDS; i++) {
            T decided = round.run(i);
            if (decided != null) {
                return decided;
            }
        }
        throw new SQLException(keptChanging, "40001");
    }

    /**
     * Runs a step that may wait for another transaction's lock, and answers {@code busy} if the wait
     * runs out.
     *
     * @param dialect tells a lock timeout ({@link JdbcExecutor#isLockTimeout})
     * @param busy the answer when the wait runs out
     * @param step the step
     * @param <T> its result
     * @return what the step returned, or {@code busy}
     * @throws SQLException if the step fails otherwise
     */
    static <T> @Nullable T busyOnLockTimeout(JdbcExecutor dialect, T busy, Execution<@Nullable T> step) throws SQLException {
        try {
            return step.run();
        } catch (SQLException e) {
            if (dialect.isLockTimeout(e)) {
                return busy;
            }
            throw e;
        }
    }
}
