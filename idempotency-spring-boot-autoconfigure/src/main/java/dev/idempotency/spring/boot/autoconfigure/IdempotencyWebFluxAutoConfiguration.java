package dev.idempotency.spring.boot.autoconfigure;

import dev.idempotency.KeyPolicy;
import dev.idempotency.jdbc.dialect.H2Dialect;
import dev.idempotency.jdbc.dialect.MariaDbDialect;
import dev.idempotency.jdbc.dialect.PostgresDialect;
import dev.idempotency.jdbc.dialect.SqlDialect;
import dev.idempotency.jdbc.dialect.TableName;
import dev.idempotency.r2dbc.R2dbcIdempotency;
import dev.idempotency.spring.webflux.WebFluxScope;
import dev.idempotency.spring.webflux.IdempotencyWebFilter;
import dev.idempotency.spring.webflux.IdempotentWebFluxEndpoint;
import io.r2dbc.spi.ConnectionFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.transaction.ReactiveTransactionManager;
import org.springframework.transaction.reactive.TransactionalOperator;
import org.springframework.util.function.SingletonSupplier;
import org.springframework.web.reactive.DispatcherHandler;
import org.springframework.web.reactive.HandlerMapping;

/**
 * Auto-configuration of {@link IdempotentWebFluxEndpoint} handler methods in a reactive (WebFlux) web
 * application on R2DBC, the transactional mode without blocking. Beans, each left out when the
 * application defines its own of the same type:
 *
 * <ul>
 *   <li>{@link R2dbcIdempotency}: on the application's one {@link ConnectionFactory}, with the
 *       dialect its driver names (H2, PostgreSQL, MariaDB; another stops the startup, naming it: define
 *       the engine bean with your dialect), {@code idempotency.table} and the key policy of
 *       {@code idempotency.*} with every {@link KeyPolicyCustomizer};</li>
 *   <li>{@link WebFluxScope}: the authenticated principal's name;</li>
 *   <li>{@link IdempotencyWebFilter}: with the HTTP layer's defaults but for the replayed headers of
 *       {@code idempotency.http.replayed-headers}, the choice for a handler's 5xx of
 *       {@code idempotency.http.server-errors} ({@code record} by default, or {@code release}) and the expiry header
 *       of {@code idempotency.http.expires-header} (none by default), as the servlet layer of
 *       {@link IdempotencyWebMvcAutoConfiguration}, in transactions of the application's one
 *       {@link ReactiveTransactionManager} (Boot's {@code R2dbcTransactionManager}), in the order
 *       {@link IdempotencyWebFilter#DEFAULT_ORDER} (after Spring Security).</li>
 * </ul>
 * Present when the application is a reactive web application with {@code idempotency-spring-webflux},
 * Spring WebFlux and an R2DBC {@code ConnectionFactory}; with {@code idempotency.store=redis} or
 * {@code dynamodb} (lease-only stores) none of these beans is built. The table is not created here:
 * subscribe to {@link R2dbcIdempotency#createTableIfMissing} once, or run {@link SqlDialect#ddl(TableName)}.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration", // Boot 4
        "org.springframework.boot.r2dbc.autoconfigure.R2dbcTransactionManagerAutoConfiguration",
        "org.springframework.boot.autoconfigure.r2dbc.R2dbcAutoConfiguration", // Boot 3
        "org.springframework.boot.autoconfigure.r2dbc.R2dbcTransactionManagerAutoConfiguration" })
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass({ DispatcherHandler.class, IdempotencyWebFilter.class, R2dbcIdempotency.class, ConnectionFactory.class })
@ConditionalOnSingleCandidate(ConnectionFactory.class)
@ConditionalOnProperty(name = IdempotencyStoreChoice.PROPERTY, havingValue = IdempotencyStoreChoice.JDBC, matchIfMissing = true)
@EnableConfigurationProperties({ IdempotencyProperties.class, IdempotencyHttpProperties.class })
public class IdempotencyWebFluxAutoConfiguration {

    /** Created by Spring. */
    public IdempotencyWebFluxAutoConfiguration() {
    }

    /**
     * @param connectionFactory the application's connection factory
     * @param properties the settings ({@code idempotency.*})
     * @param keyPolicyCustomizers what adds to the key policy
     * @return the R2DBC engine
     * @throws IllegalStateException if the driver is not one whose dialect the library ships
     */
    @Bean
    @ConditionalOnMissingBean
    public R2dbcIdempotency r2dbcIdempotency(ConnectionFactory connectionFactory, IdempotencyProperties properties,
            ObjectProvider<KeyPolicyCustomizer> keyPolicyCustomizers) {
        KeyPolicy.Builder policy = properties.toKeyPolicy().toBuilder();
        keyPolicyCustomizers.orderedStream().forEach(customizer -> customizer.customize(policy));
        return R2dbcIdempotency.builder(dialect(connectionFactory.getMetadata().getName()))
                .table(TableName.of(properties.getTable()))
                .keyPolicy(policy.build())
                .build();
    }

    private static SqlDialect dialect(String driver) {
        return switch (driver) {
            case "H2" -> new H2Dialect();
            case "PostgreSQL" -> new PostgresDialect();
            case "MariaDB" -> new MariaDbDialect();
            default -> throw new IllegalStateException("The R2DBC connection factory's driver is " + driver + ", for which the"
                    + " library ships no dialect (it has H2, PostgreSQL and MariaDB): define an R2dbcIdempotency bean built with"
                    + " R2dbcIdempotency.builder(yourDialect)");
        };
    }

    /** @return the authenticated principal's name as the scope of every key */
    @Bean
    @ConditionalOnMissingBean
    public WebFluxScope reactiveIdempotencyScope() {
        return WebFluxScope.principal();
    }

    /**
     * @param engine the R2DBC engine
     * @param connectionFactory the application's connection factory
     * @param transactionManager the application's reactive transaction manager, on that factory
     * @param scope the scope of a request's key
     * @param properties the HTTP settings ({@code idempotency.http.*})
     * @param mappings the application's handler mappings, looked up at the first request
     * @return the filter that applies {@link IdempotentWebFluxEndpoint}
     * @throws InvalidIdempotencyPropertyException naming {@code idempotency.http.replayed-headers} or
     *     {@code idempotency.http.expires-header} if a name is not a header name, or
     *     {@code idempotency.http.server-errors} if empty
     */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnSingleCandidate(ReactiveTransactionManager.class)
    public IdempotencyWebFilter idempotencyWebFilter(R2dbcIdempotency engine, ConnectionFactory connectionFactory,
            ReactiveTransactionManager transactionManager, WebFluxScope scope, IdempotencyHttpProperties properties,
            ObjectProvider<HandlerMapping> mappings) {
        dev.idempotency.http.HttpIdempotency.Builder<Void> layer = properties.configure(dev.idempotency.http.HttpIdempotency.builder(engine.keyPolicy()));
        return IdempotencyWebFilter.builder(engine, connectionFactory, TransactionalOperator.create(transactionManager),
                        SingletonSupplier.of(() -> mappings.orderedStream().toList()))
                .layer(layer.build())
                .scope(scope)
                .build();
    }
}
