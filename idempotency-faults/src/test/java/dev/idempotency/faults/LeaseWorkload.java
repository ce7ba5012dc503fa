package dev.idempotency.faults;

import dev.idempotency.Idempotency;
import dev.idempotency.LeasePolicy;
import dev.idempotency.LeasedIdempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Phases;
import dev.idempotency.ResultCodec;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.jdbc.JdbcTransactions;
import dev.idempotency.spi.NoTransaction;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * The leased operation of the lease-mode fault tests, a charge in three phases
 * ({@link dev.idempotency.Phases}):
 * <ol>
 *   <li><b>prepare</b>, committed with the claim: a business row in {@value #OPERATIONS} (no unique
 *       constraint, so that a prepare run twice shows as a second row) with a value unique to this
 *       execution, still pending;</li>
 *   <li><b>call</b>, outside any transaction: the {@link ExternalEffects} service, sent the attempt's
 *       downstream key, answers the prepare's value and a value unique to the effect it made;</li>
 *   <li><b>finish</b>, committed with the result: the business row takes the service's answer, which is
 *       the result.</li>
 * </ol>
 * So once every key is answered, each key has one business row, one effect of the service, and one
 * completed record, all with the same value; a prepare run again, a call that reached the service
 * under another downstream key, or a finish of the wrong prepare shows as a difference.
 */
final class LeaseWorkload {

    static final String OPERATIONS = "fault_lease_op";

    private static final String PENDING = "pending ";

    private LeaseWorkload() {
    }

    /** @return the engine of chunks on {@code ds} */
    static ManagedIdempotency<Connection> managed(DataSource ds, JdbcIdempotencyStore store) {
        return ManagedIdempotency.of(Idempotency.builder(store).build(), JdbcTransactions.of(ds));
    }

    /** @return the engine of lease mode on {@code ds}, with leases of {@code lease} */
    static LeasedIdempotency<Connection> leased(DataSource ds, JdbcIdempotencyStore store, Duration lease) {
        return LeasedIdempotency.of(managed(ds, store), store, LeasePolicy.builder().lease(lease).build());
    }

    /** @return the external service of a run, in its folder */
    static ExternalEffects effects(Path runDir) {
        return new ExternalEffects(runDir.resolve("effects"));
    }

    /** @return the phases of {@code key}'s operation for {@code client} */
    static Phases<Connection, String, Exception> phases(FaultClient client, String scope, String key, ExternalEffects service) {
        return Phases.<Connection, String, Exception>prepare(tx -> {
            String prepared = client.nextValue();
            try (PreparedStatement s = tx.prepareStatement("INSERT INTO " + OPERATIONS + " (scope, key_id, prepared) VALUES (?, ?, ?)")) {
                s.setString(1, scope);
                s.setString(2, key);
                s.setString(3, prepared);
                s.executeUpdate();
            }
            return prepared;
        }, ResultCodec.string())
                .call((attempt, prepared) -> service.call(key, attempt.downstreamKey().id(), prepared + "/" + client.nextValue()))
                .finish((tx, prepared, answer) -> {
                    try (PreparedStatement s = tx.prepareStatement("UPDATE " + OPERATIONS + " SET effect = ? WHERE scope = ? AND key_id = ?"
                            + " AND prepared = ?")) {
                        s.setString(1, answer);
                        s.setString(2, scope);
                        s.setString(3, key);
                        s.setString(4, prepared);
                        if (s.executeUpdate() != 1) {
                            throw new IllegalStateException("the finish of key " + key + " found no prepared row " + prepared);
                        }
                    }
                    return answer;
                }, ResultCodec.string());
    }

    /**
     * The same charge for a store without transactions ({@link LeaseStore}, Redis): the phases get
     * {@link NoTransaction#NONE} and write nowhere themselves, so the prepare's value is kept only as
     * the recovery point the store records with the claim, and the finish answers the service's
     * answer, which the store records as the result. A prepare run again after the call, or a call
     * that reached the service under another downstream key, shows as a second effect or as a result
     * that is not the effect's.
     */
    static Phases<NoTransaction, String, Exception> phasesOutside(FaultClient client, String key, ExternalEffects service) {
        return Phases.<NoTransaction, String, Exception>prepare(tx -> client.nextValue(), ResultCodec.string())
                .call((attempt, prepared) -> service.call(key, attempt.downstreamKey().id(), prepared + "/" + client.nextValue()))
                .finish((tx, prepared, answer) -> answer, ResultCodec.string());
    }

    static void createTables(DataSource ds, JdbcIdempotencyStore store) throws SQLException {
        Workload.createTables(ds, store, OPERATIONS, "prepared VARCHAR(200) NOT NULL, effect VARCHAR(400)");
    }

    /**
     * @return the state after a run: as business rows, each prepared row's value once finished
     *     ({@code pending} and its prepare's value before); the records; and the service's effects
     */
    static DatabaseState read(DataSource ds, JdbcIdempotencyStore store, String scope, ExternalEffects service) throws SQLException {
        Map<String, List<String>> rows = new HashMap<>();
        try (Connection c = ds.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT key_id, prepared, effect FROM " + OPERATIONS + " WHERE scope = ?")) {
            s.setString(1, scope);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    String effect = rs.getString(3);
                    rows.computeIfAbsent(rs.getString(1), k -> new ArrayList<>()).add(effect == null ? PENDING + rs.getString(2) : effect);
                }
            }
            if (!c.getAutoCommit()) {
                c.rollback();
            }
        }
        return new DatabaseState(rows, Workload.records(ds, store, scope), service.made());
    }
}
