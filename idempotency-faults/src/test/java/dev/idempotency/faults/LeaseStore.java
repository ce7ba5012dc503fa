package dev.idempotency.faults;

import dev.idempotency.Idempotency;
import dev.idempotency.LeasePolicy;
import dev.idempotency.LeasedIdempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.LeaseOnlyStore;
import dev.idempotency.spi.NoTransaction;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;

/**
 * The store a lease-mode fault run keeps its keys in: a JDBC database ({@link JdbcLeaseStore}), or a
 * store without transactions on a server of its own ({@link RedisLeaseStore}, {@link DynamoDbLeaseStore}). The kill loop, the
 * workload ({@link LeaseWorkload}), the service outside ({@link ExternalEffects}) and the check
 * ({@link HistoryChecker}) are the same for every kind; a kind says only how to reach its store,
 * how to run the workload's phases on it and how to read the records it holds. A new kind is a class
 * of this interface and one line in {@link #at}.
 */
interface LeaseStore {

    /** @return the store's name, for the figures and messages */
    String name();

    /**
     * @return the three arguments a child JVM is given to reach the same store ({@link #at}): an
     *     address, a user and a password ({@code -} for none)
     */
    List<String> address();

    /**
     * @param connections how many threads will use it
     * @return connections to the store; close it before the children start if the store is opened by
     *     one process at a time (an H2 file)
     */
    Opened open(int connections) throws Exception;

    /** Open connections to a store, for one process. */
    interface Opened extends AutoCloseable {

        /** Creates what the workload needs in the store: the JDBC tables; nothing for a store that needs no schema. */
        void createTables() throws SQLException;

        /** @return a factory of lease-mode clients of the workload on this store, for the key scope {@code scope} */
        FaultClient.Factory clients(String scope, Path runDir, Duration lease);

        /** @return what the store (and the service outside it) holds for {@code scope} */
        DatabaseState read(String scope, ExternalEffects service) throws SQLException;

        @Override
        void close();
    }

    /**
     * The clients of a store without transactions: lease mode with no transaction, the workload's
     * phases outside one ({@link LeaseWorkload#phasesOutside}).
     *
     * @return a factory of lease-mode clients on {@code store} for the key scope {@code scope}
     */
    static FaultClient.Factory clientsOutside(LeaseOnlyStore store, String scope, Path runDir, Duration lease) {
        LeasedIdempotency<NoTransaction> managed = LeasedIdempotency.builder(store)
                .leasePolicy(LeasePolicy.builder().lease(lease).build()).build();
        return (name, history) -> FaultClient.leased(name, managed, history, scope,
                (c, key) -> LeaseWorkload.phasesOutside(c, key, LeaseWorkload.effects(runDir)));
    }

    /**
     * The child JVM's side of {@link #address()}.
     *
     * @return the store at {@code address}: a Redis URI ({@code redis://}), a DynamoDB endpoint
     *     ({@code dynamodb+http://}) or a JDBC URL
     */
    static LeaseStore at(String address, String user, String password) {
        if (address.startsWith("redis:")) {
            return new RedisLeaseStore(address);
        }
        if (address.startsWith(DynamoDbLeaseStore.SCHEME)) {
            return new DynamoDbLeaseStore(address.substring(DynamoDbLeaseStore.SCHEME.length()));
        }
        return new JdbcLeaseStore(new FaultDatabase("child", address, user, password, true));
    }
}
