package dev.idempotency.spring.boot.autoconfigure;

import dev.idempotency.IdempotencyListener;
import dev.idempotency.LeasedIdempotency;
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
 * with {@code idempotency.store} set to its kind). One bean on every such store, left out when the
 * application defines its own:
 *
 * <ul>
 *   <li>{@code LeasedIdempotency<NoTransaction>}, for lease mode and phases, with the key policy of
 *       {@link IdempotencyProperties} and every {@link IdempotencyListener} bean (the metrics one
 *       included), refusing or running without deduplication when the store cannot be reached
 *       ({@code idempotency.when-unavailable}).</li>
 * </ul>
 * Transactional mode ({@code SpringIdempotency}, {@code Idempotency}, {@code ManagedIdempotency})
 * needs the JDBC store: a store outside the database cannot take part in its transaction, and is no
 * {@code TransactionalStore}. Asking for one of its beans with a lease-only store chosen stops the
 * startup saying so ({@link TransactionalModeFailureAnalyzer}).
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
     * @return lease mode and phases on the store
     */
    @Bean
    @ConditionalOnMissingBean(LeasedIdempotency.class)
    public LeasedIdempotency<NoTransaction> leasedIdempotency(LeaseOnlyStore store, IdempotencyProperties properties,
            ObjectProvider<IdempotencyListener> listeners) {
        return LeasedIdempotency.builder(store)
                .keyPolicy(properties.toKeyPolicy())
                .listener(CompositeIdempotencyListener.of(listeners.orderedStream().toList()))
                .whenStoreUnavailable(properties.getWhenUnavailable())
                .build();
    }
}
