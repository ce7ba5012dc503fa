package dev.idempotency.quarkus;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.KeyPolicy;
import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.jakarta.rest.IdempotencyRestFeature;
import dev.idempotency.jakarta.transaction.JtaTransactions;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import io.quarkus.arc.DefaultBean;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import jakarta.transaction.TransactionManager;
import java.sql.Connection;
import java.time.Duration;
import java.util.Optional;
import javax.sql.DataSource;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * The beans of the {@code Idempotency-Key} header on Quarkus, from MicroProfile Config's
 * {@code idempotency.*} properties, over the default datasource (Agroal, which Narayana's
 * transaction manager enlists):
 * <table>
 *   <caption>Properties</caption>
 *   <tr><th>property</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@code idempotency.table}</td><td>{@code idempotency_record}</td><td>the records' table</td></tr>
 *   <tr><td>{@code idempotency.create-table}</td><td>{@code false}</td><td>create the table at start if it is missing</td></tr>
 *   <tr><td>{@code idempotency.lock-timeout}</td><td>{@code 10s}</td><td>how long a duplicate waits for the first
 *       attempt's transaction before its 409</td></tr>
 *   <tr><td>{@code idempotency.retention}</td><td>the key policy's</td><td>how long a record is kept</td></tr>
 *   <tr><td>{@code idempotency.retry-after}</td><td>{@code 1s}</td><td>the {@code Retry-After} of that 409</td></tr>
 *   <tr><td>{@code idempotency.max-request-bytes}</td><td>{@code 1048576}</td><td>the largest body read; more: 413</td></tr>
 *   <tr><td>{@code idempotency.metrics.enabled}</td><td>{@code true}</td><td>with quarkus-micrometer, the engine's
 *       metrics in its {@code MeterRegistry}</td></tr>
 *   <tr><td>{@code idempotency.metrics.scope-tag}</td><td>{@code false}</td><td>tag each meter with the key's scope</td></tr>
 * </table>
 * Each bean is a {@link DefaultBean}: an application that produces its own (another scope than the
 * {@code SecurityContext}'s principal, a key policy of its own) replaces it. Thread-safe: the beans
 * are immutable.
 */
@ApplicationScoped
public class IdempotencyBeans {

    /** Created by CDI. */
    public IdempotencyBeans() {
    }

    @ConfigProperty(name = "idempotency.table", defaultValue = "idempotency_record")
    String table;
    @ConfigProperty(name = "idempotency.create-table", defaultValue = "false")
    boolean createTable;
    @ConfigProperty(name = "idempotency.lock-timeout", defaultValue = "10s")
    Duration lockTimeout;
    @ConfigProperty(name = "idempotency.retention")
    Optional<Duration> retention;
    @ConfigProperty(name = "idempotency.retry-after", defaultValue = "1s")
    Duration retryAfter;
    @ConfigProperty(name = "idempotency.max-request-bytes", defaultValue = "1048576")
    int maxRequestBytes;
    @ConfigProperty(name = "idempotency.metrics.enabled", defaultValue = "true")
    boolean metricsEnabled;
    @ConfigProperty(name = "idempotency.metrics.scope-tag", defaultValue = "false")
    boolean metricsScopeTag;

    /** @return the JDBC store on {@code idempotency.table} */
    @Produces
    @Singleton
    @DefaultBean
    public JdbcIdempotencyStore store() {
        return JdbcIdempotencyStore.builder().table(table).build();
    }

    /**
     * With quarkus-micrometer (and {@code idempotency.metrics.enabled}, the default), a
     * {@link dev.idempotency.micrometer.MicrometerIdempotencyListener} over Quarkus' {@code MeterRegistry},
     * its meters those of the Spring Boot auto-configuration; without it, a listener that does nothing.
     *
     * @return the engine's listener
     */
    @Produces
    @Singleton
    @DefaultBean
    public IdempotencyListener listener() {
        return metricsEnabled && micrometerPresent() ? QuarkusMeters.listener(metricsScopeTag) : IdempotencyListener.NONE;
    }

    private static boolean micrometerPresent() {
        try {
            Class.forName("io.micrometer.core.instrument.MeterRegistry", false, IdempotencyBeans.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError absent) {
            return false;
        }
    }

    /**
     * @param store the store
     * @param transactionManager Narayana's
     * @param dataSource the default datasource
     * @param listener the engine's listener
     * @return the Jakarta REST filters' feature, for {@link IdempotencyFilters}
     */
    @Produces
    @Singleton
    @DefaultBean
    public IdempotencyRestFeature feature(JdbcIdempotencyStore store, TransactionManager transactionManager, DataSource dataSource,
                                          IdempotencyListener listener) {
        KeyPolicy.Builder policy = KeyPolicy.builder().lockTimeout(lockTimeout);
        retention.ifPresent(policy::retention);
        Idempotency<Connection> engine = Idempotency.builder(store).keyPolicy(policy.build()).listener(listener).build();
        return IdempotencyRestFeature.builder(HttpIdempotency.builder(engine).retryAfter(retryAfter).build(),
                        JtaTransactions.of(transactionManager, dataSource))
                .maxRequestBytes(maxRequestBytes)
                .build();
    }

    void createTable(@Observes StartupEvent start, JdbcIdempotencyStore store, DataSource dataSource) {
        if (createTable) {
            store.createTableIfMissing(dataSource);
        }
    }
}
