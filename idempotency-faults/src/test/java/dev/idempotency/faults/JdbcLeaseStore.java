package dev.idempotency.faults;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;

/**
 * A JDBC database as the store of lease mode: the workload's prepare and finish commit their
 * business rows with the claim and the result ({@link LeaseWorkload}).
 *
 * @param db the database
 */
record JdbcLeaseStore(FaultDatabase db) implements LeaseStore {

    @Override
    public String name() {
        return db.name();
    }

    @Override
    public List<String> address() {
        return db.address();
    }

    @Override
    public Opened open(int connections) {
        HikariDataSource ds = db.pool(connections);
        JdbcIdempotencyStore store = JdbcIdempotencyStore.ofDefaults();
        return new Opened() {
            @Override
            public void createTables() throws SQLException {
                LeaseWorkload.createTables(ds, store);
            }

            @Override
            public FaultClient.Factory clients(String scope, Path runDir, Duration lease) {
                return (name, history) -> FaultClient.leased(name, LeaseWorkload.leased(ds, store, lease), history, scope,
                        (client, key) -> LeaseWorkload.phases(client, scope, key, LeaseWorkload.effects(runDir)));
            }

            @Override
            public DatabaseState read(String scope, ExternalEffects service) throws SQLException {
                return LeaseWorkload.read(ds, store, scope, service);
            }

            @Override
            public void close() {
                ds.close();
            }
        };
    }

    @Override
    public String toString() {
        return name();
    }
}
