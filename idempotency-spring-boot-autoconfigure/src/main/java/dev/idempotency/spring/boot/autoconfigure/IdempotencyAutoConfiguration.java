package dev.idempotency.spring.boot.autoconfigure;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.KeyPolicy;
import dev.idempotency.LeasePolicy;
import dev.idempotency.LeasedIdempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.NamedPhases;
import dev.idempotency.RecoveringLeasedIdempotency;
import dev.idempotency.RecoveryWorker;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spi.RecoveringStore;
import dev.idempotency.spring.SpringIdempotency;
import dev.idempotency.spring.SpringTransactions;
import java.sql.Connection;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * Auto-configuration of the engine on the application's {@link DataSource} (one, or one marked
 * primary). Beans, each left out when the application defines its own of the same type:
 *
 * <ul>
 *   <li>{@link JdbcIdempotencyStore}, on {@code idempotency.table};</li>
 *   <li>{@code Idempotency<Connection>}, with the key policy of {@link IdempotencyProperties} (and what
 *       each {@link KeyPolicyCustomizer} bean adds to it) and
 *       every {@link IdempotencyListener} bean of the context (the metrics one included), which the
 *       engine also hands to its store, so that they hear its report of a database whose commits
 *       are not durable;</li>
 *   <li>{@link SpringIdempotency}, for {@code @Transactional} methods;</li>
 *   <li>with one {@link PlatformTransactionManager}: {@code ManagedIdempotency<Connection>} over
 *       {@link SpringTransactions}, for transactions the library runs (retries, batch jobs), and
 *       {@code RecoveringLeasedIdempotency<Connection>} (a {@code LeasedIdempotency<Connection>} that
 *       runs named phases too), lease mode and phases over the same store and
 *       transactions, sharing that engine's key policy and listeners, refusing or running without
 *       deduplication when the database cannot be reached ({@code idempotency.when-unavailable});
 *       none when the application's own engine is over a store that lists no named operations;</li>
 *   <li>with {@code idempotency.recovery.enabled=true} as well: a {@link RecoveryWorker} over every
 *       {@code NamedPhases<Connection, ?, ?>} bean, started with the context and closed with it
 *       ({@code idempotency.recovery.interval}, {@code idempotency.recovery.max-attempts}).</li>
 * </ul>
 * The table is created at startup only with {@code idempotency.create-table=true}; otherwise ship
 * the DDL with Flyway or Liquibase.
 *
 * <p>Built unless {@code idempotency.store} chooses another store ({@link IdempotencyStoreChoice}):
 * with {@code idempotency.store=redis}, {@link IdempotencyRedisAutoConfiguration} builds lease mode
 * on Redis instead.
 *
 * <p>The same class serves Spring Boot 4 and Spring Boot 3.5: it runs after Boot's JDBC, JPA and
 * transaction auto-configuration under the names of either line.
 */
@AutoConfiguration(afterName = {
        // Boot 4: each technology's auto-configuration in a module of its own
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
        "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
        "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration",
        "org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration",
        // Boot 3.5: the same, in spring-boot-autoconfigure (a name the class path lacks is ignored)
        "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
        "org.springframework.boot.autoconfigure.jdbc.DataSourceTransactionManagerAutoConfiguration",
        "org.springframework.boot.autoconfigure.orm.jpa.HibernateJpaAutoConfiguration",
        "org.springframework.boot.autoconfigure.transaction.TransactionAutoConfiguration" })
@ConditionalOnClass({ SpringIdempotency.class, DataSource.class })
@ConditionalOnSingleCandidate(DataSource.class)
@ConditionalOnProperty(name = IdempotencyStoreChoice.PROPERTY, havingValue = IdempotencyStoreChoice.JDBC, matchIfMissing = true)
@EnableConfigurationProperties(IdempotencyProperties.class)
public class IdempotencyAutoConfiguration {

    /** Created by Spring. */
    public IdempotencyAutoConfiguration() {
    }

    /**
     * @param properties the settings
     * @return the JDBC store on the configured table
     * @throws InvalidIdempotencyPropertyException naming {@code idempotency.table} if the name is not a plain identifier
     */
    @Bean
    @ConditionalOnMissingBean
    public JdbcIdempotencyStore idempotencyStore(IdempotencyProperties properties) {
        return properties.toStore();
    }

    /**
     * @param store the store
     * @param dataSource the application's data source
     * @return what creates the table at startup
     */
    @Bean
    @ConditionalOnBooleanProperty("idempotency.create-table")
    IdempotencyTableCreator idempotencyTableCreator(JdbcIdempotencyStore store, DataSource dataSource) {
        return new IdempotencyTableCreator(store, dataSource);
    }

    /**
     * @param store the store
     * @param properties the settings
     * @param listeners the listeners of the context, in their order
     * @param table what creates the table, when asked for: created first
     * @param keyPolicyCustomizers what adds to the key policy of the properties, in their order
     * @return the engine
     */
    @Bean
    @ConditionalOnMissingBean(Idempotency.class)
    public Idempotency<Connection> idempotency(JdbcIdempotencyStore store, IdempotencyProperties properties,
            ObjectProvider<IdempotencyListener> listeners, ObjectProvider<IdempotencyTableCreator> table,
            ObjectProvider<KeyPolicyCustomizer> keyPolicyCustomizers) {
        table.ifAvailable(creator -> { });
        KeyPolicy.Builder policy = properties.toKeyPolicy().toBuilder();
        keyPolicyCustomizers.orderedStream().forEach(customizer -> customizer.customize(policy));
        return Idempotency.builder(store)
                .keyPolicy(policy.build())
                .listener(CompositeIdempotencyListener.of(listeners.orderedStream().toList()))
                .build();
    }

    /**
     * @param idempotency the engine
     * @param dataSource the application's data source
     * @return the engine inside the current Spring-managed transaction
     */
    @Bean
    @ConditionalOnMissingBean
    public SpringIdempotency springIdempotency(Idempotency<Connection> idempotency, DataSource dataSource) {
        return SpringIdempotency.of(idempotency, dataSource);
    }

    /** The engine for transactions the library runs, through the application's transaction manager. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnSingleCandidate(PlatformTransactionManager.class)
    static class Managed {

        @Bean
        @ConditionalOnMissingBean(ManagedIdempotency.class)
        ManagedIdempotency<Connection> managedIdempotency(Idempotency<Connection> idempotency,
                PlatformTransactionManager transactionManager, DataSource dataSource) {
            return ManagedIdempotency.of(idempotency, SpringTransactions.of(transactionManager, dataSource));
        }

        /**
         * Lease mode and phases over the managed engine's own store, sharing that engine's settings and
         * transactions: a {@link RecoveringLeasedIdempotency}, which runs named phases too, for the store
         * lists the named operations in progress. The JDBC store of Boot's engine always does; none if
         * the application's own engine is over a store that does not (it keeps no leases, or lists
         * nothing): define that application's {@code LeasedIdempotency} bean yourself.
         */
        @Bean
        @ConditionalOnMissingBean(LeasedIdempotency.class)
        @SuppressWarnings("unchecked") // the engine's store runs in the engine's transactions: a store of Connection
        @Nullable RecoveringLeasedIdempotency<Connection> leasedIdempotency(ManagedIdempotency<Connection> managed,
                IdempotencyProperties properties) {
            if (!(managed.engine().store() instanceof RecoveringStore<?> listing)) {
                return null; // the application's engine is over a store that lists no named operations
            }
            return LeasedIdempotency.of(managed, (RecoveringStore<Connection>) listing, LeasePolicy.ofDefaults(),
                    properties.getWhenUnavailable());
        }

        /**
         * With {@code idempotency.recovery.enabled=true}: a recovery worker over every named
         * {@code Phases} bean ({@link NamedPhases}), started with the context and closed with it.
         */
        @Bean(initMethod = "start", destroyMethod = "close")
        @ConditionalOnBooleanProperty("idempotency.recovery.enabled")
        @ConditionalOnMissingBean(RecoveryWorker.class)
        RecoveryWorker<Connection> idempotencyRecoveryWorker(ObjectProvider<RecoveringLeasedIdempotency<Connection>> leased,
                ManagedIdempotency<Connection> managed, ObjectProvider<NamedPhases<Connection, ?, ?>> phases,
                IdempotencyProperties properties) {
            RecoveringLeasedIdempotency<Connection> recovering = leased.getIfAvailable();
            if (recovering == null) {
                throw new InvalidIdempotencyPropertyException("idempotency.recovery.enabled", "true", "the engine's store, "
                        + managed.engine().store() + ", lists no named operations (it is not a RecoveringStore); use the JDBC"
                        + " store, or leave the property unset", null);
            }
            RecoveryWorker.Builder<Connection> worker = properties.getRecovery()
                    .applyTo(RecoveryWorker.builder(recovering));
            phases.orderedStream().forEach(worker::register);
            try {
                return worker.build();
            } catch (IllegalStateException e) {
                throw new InvalidIdempotencyPropertyException("idempotency.recovery.enabled", "true", e.getMessage()
                        + "; declare each operation to resume as a NamedPhases bean (Phases...named(\"...\")), or leave the"
                        + " property unset", e);
            }
        }
    }
}
