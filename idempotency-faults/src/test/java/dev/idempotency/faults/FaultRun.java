package dev.idempotency.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyException;
import dev.idempotency.KeyPolicy;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.Predicate;
import javax.sql.DataSource;

/**
 * One run of a fault test on one database: a fresh key scope, a folder of histories, and the end of
 * every run: once the faults are over, a last client retries every key the run touched until it is
 * answered (so a key left in progress would show, and every acknowledged key is asked again and
 * must replay), then the histories are checked against the database ({@link HistoryChecker}).
 */
final class FaultRun {

    /** Whether the deep setting runs ({@code -Didempotency.faults.deep=true}). */
    static final boolean DEEP = Boolean.getBoolean("idempotency.faults.deep");

    /** Exceptions a client may see when its process, connection or server fails: the library's, and the driver's own. */
    static final Predicate<String> INFRASTRUCTURE_FAILURES = type -> isA(type, IdempotencyException.class) || isA(type, SQLException.class);

    /** Exceptions of the library only: a failure of one of its own statements never reaches the caller raw. */
    static final Predicate<String> LIBRARY_FAILURES = type -> isA(type, IdempotencyException.class);

    /** The store's name, for the figures. */
    final String name;
    final Path dir;
    final String scope = "f-" + UUID.randomUUID().toString().substring(0, 8);
    final JdbcIdempotencyStore store = JdbcIdempotencyStore.ofDefaults();

    FaultRun(FaultDatabase db, Path dir) {
        this(db.name(), dir);
    }

    /** A run on a store that is not a JDBC database ({@link LeaseStore}). */
    FaultRun(String name, Path dir) {
        this.name = name;
        this.dir = dir;
    }

    History history(String client) {
        return History.append(dir.resolve(client + ".history"));
    }

    FaultClient client(String name, DataSource ds, History history, FaultClient.Faults faults) {
        return client(name, ds, KeyPolicy.ofDefaults(), history, faults);
    }

    FaultClient client(String name, DataSource ds, KeyPolicy policy, History history, FaultClient.Faults faults) {
        return new FaultClient(name, ds, store, policy, history, scope, faults);
    }

    /**
     * The last pass and the check, for the transactional workload ({@link Workload}); prints the
     * figures and fails on any violation.
     *
     * @param ds a pool on the database, with every fault over
     * @param expected the exception types that clients may have seen
     * @param what a line on the faults injected, for the figures
     * @return the report
     */
    HistoryChecker.Report check(DataSource ds, Predicate<String> expected, String what) throws IOException, SQLException, InterruptedException {
        return check(expected, what, (name, history) -> client(name, ds, history, FaultClient.Faults.NONE),
                () -> Workload.read(ds, store, scope));
    }

    /**
     * The last pass and the check, for any workload: once the faults are over, a client of the
     * workload ({@code recovery}, on a pool with every fault over) retries every key the run touched until it is answered, waiting out
     * the leases of killed holders; then the histories are set against the state.
     *
     * @param expected the exception types that clients may have seen
     * @param what a line on the faults injected, for the figures
     * @param recovery makes the client of the last pass
     * @param state reads what the database (and the service outside it) holds
     * @return the report
     */
    HistoryChecker.Report check(Predicate<String> expected, String what, FaultClient.Factory recovery, State state)
            throws IOException, SQLException, InterruptedException {
        Set<String> keys = new TreeSet<>();
        History.readAll(dir).forEach(e -> keys.add(e.key()));
        try (History last = history("zz-recovery")) {
            FaultClient client = recovery.client("recovery", last);
            for (String key : keys) {
                client.untilAnswered(key, Duration.ofSeconds(30));
            }
        }
        List<HistoryEvent> history = History.readAll(dir);
        HistoryChecker.Report report = new HistoryChecker(expected).check(history, state.read());
        System.out.printf("%s [%s]: %s; %s%n", what, name, report, scope);
        assertThat(report.violations()).as("violations of the guarantee on %s after %s", name, what).isEmpty();
        return report;
    }

    /** Reads the state a run left. */
    @FunctionalInterface
    interface State {
        DatabaseState read() throws SQLException;
    }

    private static boolean isA(String className, Class<?> type) {
        try {
            return type.isAssignableFrom(Class.forName(className, false, FaultRun.class.getClassLoader()));
        } catch (ClassNotFoundException e) {
            return false;
        }
    }
}
