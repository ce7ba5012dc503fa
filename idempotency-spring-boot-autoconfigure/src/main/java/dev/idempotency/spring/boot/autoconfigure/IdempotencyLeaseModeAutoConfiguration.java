package dev.idempotency.spring.boot.autoconfigure;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.spi.LeaseOnlyStore;
import dev.idempotency.spi.NoTransaction;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;

/**
 * Auto-configuration of lease mode and phases on the lease-only store that {@link IdempotencyStoreChoice}
 * chose (Redis, {@link IdempotencyRedisAutoConfiguration}; DynamoDB,
 * {@link IdempotencyDynamoDbAutoConfiguration}; or the application's own {@link LeaseOnlyStore} bean
 * with {@code idempotency.store} set to its kind). The same two beans on every such store, each left
 * out when the application defines its own of the same type:
 *
 * <ul>
 *   <li>{@code Idempotency<NoTransaction>}, with the key policy of {@link IdempotencyProperties} and
 *       every {@link IdempotencyListener} bean (the metrics one included);</li>
 *   <li>{@code ManagedIdempotency<NoTransaction>}, for lease mode and phases, refusing or running
 *       without deduplication when the store cannot be reached ({@code idempotency.when-unavailable}).</li>
 * </ul>
 * Transactional mode ({@code SpringIdempotency}, {@code Idempotency<Connection>}) needs the JDBC
 * store: a store outside the database cannot take part in its transaction. Asking for one of its
 * beans with a lease-only store chosen stops the startup saying so ({@link TransactionalModeFailureAnalyzer}).
 */
@AutoConfiguration(after = { IdempotencyMetricsAutoConfiguration.class, IdempotencyRedisAutoConfiguration.class,
        IdempotencyDynamoDbAutoConfiguration.class })
@Conditional(IdempotencyStoreChoice.Any.class)
@ConditionalOnSingleCandidate(LeaseOnlyStore.class)
@EnableConfigurationProperties(IdempotencyProperties.class)
public class IdempotencyLeaseModeAutoConfiguration {

    /** Created by Spring. */
    public IdempotencyLeaseModeAutoConfiguration() {
    }

    /**
     * @param store the lease-only store
     * @param properties the settings
     * @param listeners the listeners of the context, in their order
     * @return the engine on the store
     */
    @Bean
    @ConditionalOnMissingBean(Idempotency.class)
    public Idempotency<NoTransaction> idempotency(LeaseOnlyStore store, IdempotencyProperties properties,
            ObjectProvider<IdempotencyListener> listeners) {
        return Idempotency.builder(store)
                .keyPolicy(properties.toKeyPolicy())
                .listener(CompositeIdempotencyListener.of(listeners.orderedStream().toList()))
                .build();
    }

    /**
     * @param idempotency the engine on the store
     * @param properties the settings ({@code idempotency.when-unavailable})
     * @return lease mode and phases on the store
     */
    @Bean
    @ConditionalOnMissingBean(ManagedIdempotency.class)
    public ManagedIdempotency<NoTransaction> managedIdempotency(Idempotency<NoTransaction> idempotency, IdempotencyProperties properties) {
        return ManagedIdempotency.builder(idempotency, NoTransaction.runner())
                .whenStoreUnavailable(properties.getWhenUnavailable())
                .build();
    }
}
