package dev.idempotency.spring.webmvc;

import dev.idempotency.Idempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.RetryPolicy;
import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.jdbc.Idempotent;
import dev.idempotency.spring.SpringTransactions;
import java.sql.Connection;
import java.util.List;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.util.function.SingletonSupplier;
import org.springframework.web.servlet.HandlerMapping;

/**
 * The {@link IdempotentEndpoint} support of a plain Spring MVC application (no Spring Boot), imported
 * by {@link EnableIdempotentEndpoints}. It defines one bean, the {@link IdempotencyFilter} named
 * {@value #FILTER_BEAN_NAME}, from what the context holds:
 *
 * <ul>
 *   <li>the layer: the context's {@code HttpIdempotency} bean if it has one; otherwise the HTTP
 *       layer's defaults on a {@link ManagedIdempotency} over {@link SpringTransactions}, with the
 *       context's one {@link PlatformTransactionManager} and one {@link DataSource}, no retries (a
 *       servlet request cannot be dispatched twice; the client retries), and the context's
 *       {@code Idempotency<Connection>} engine, or {@link Idempotent#ofDefaults()} without one;</li>
 *   <li>the scope: the context's {@link IdempotencyScope} bean, or {@link IdempotencyScope#userPrincipal()};</li>
 *   <li>the handler mappings: the context's, looked up at the first request.</li>
 * </ul>
 * A missing transaction manager or data source fails the context's refresh with Spring's
 * {@code NoSuchBeanDefinitionException} naming the type.
 *
 * <p>The filter must also be registered with the servlet container, around the
 * {@code DispatcherServlet} and after authentication: a {@code DelegatingFilterProxy} for
 * {@value #FILTER_BEAN_NAME}, whose {@code contextAttribute} names the {@code DispatcherServlet}'s
 * context ({@code FrameworkServlet.SERVLET_CONTEXT_PREFIX} and the servlet's name), so that it finds
 * the filter once that servlet has started. A Boot application needs none of this:
 * {@code idempotency-spring-boot-autoconfigure} does both.
 *
 * <p>Thread safety: a configuration class, used by Spring while the context starts; the filter it
 * defines is thread-safe.
 */
@Configuration(proxyBeanMethods = false)
public class IdempotentEndpointsConfiguration {

    /** The name of the filter's bean, for the servlet container's {@code DelegatingFilterProxy}. */
    public static final String FILTER_BEAN_NAME = "idempotencyFilter";

    /** Created by Spring. */
    public IdempotentEndpointsConfiguration() {
    }

    /**
     * @param layers the context's {@code HttpIdempotency}, if any
     * @param scopes the context's {@link IdempotencyScope}, if any
     * @param engines the context's {@code Idempotency<Connection>}, if any
     * @param transactionManager the context's transaction manager, needed without a layer bean
     * @param dataSource the context's data source, needed without a layer bean
     * @param mappings the context's handler mappings, looked up at the first request
     * @return the filter that applies {@link IdempotentEndpoint}
     */
    @Bean(FILTER_BEAN_NAME)
    public IdempotencyFilter idempotencyFilter(ObjectProvider<HttpIdempotency<?>> layers, ObjectProvider<IdempotencyScope> scopes,
            ObjectProvider<Idempotency<Connection>> engines, ObjectProvider<PlatformTransactionManager> transactionManager,
            ObjectProvider<DataSource> dataSource, ObjectProvider<HandlerMapping> mappings) {
        HttpIdempotency<?> layer = layers.getIfAvailable(() -> transactionalLayer(engines.getIfAvailable(Idempotent::ofDefaults),
                transactionManager.getObject(), dataSource.getObject()).build());
        return filter(layer, scopes.getIfAvailable(IdempotencyScope::userPrincipal), mappings);
    }

    /**
     * The builder of the layer this configuration, and Boot's, make by default: the HTTP layer's
     * defaults on a {@link ManagedIdempotency} over {@link SpringTransactions}, without retries.
     *
     * @param engine the engine
     * @param transactionManager the application's transaction manager, which the handler's
     *     {@code JdbcTemplate} and {@code @Transactional} code join
     * @param dataSource the transaction manager's data source
     * @return the layer's builder, for more settings (the replayed headers, say)
     */
    public static HttpIdempotency.Builder<Connection> transactionalLayer(Idempotency<Connection> engine,
            PlatformTransactionManager transactionManager, DataSource dataSource) {
        ManagedIdempotency<Connection> managed = ManagedIdempotency.builder(engine, SpringTransactions.of(transactionManager, dataSource))
                .retryPolicy(RetryPolicy.none())
                .build();
        return HttpIdempotency.builder(managed);
    }

    /**
     * The filter this configuration, and Boot's, define: the default body limit
     * ({@link IdempotencyFilter#DEFAULT_MAX_REQUEST_BYTES}) and order ({@link IdempotencyFilter#DEFAULT_ORDER}).
     *
     * @param layer the HTTP layer
     * @param scope the scope of a request's key
     * @param mappings the handler mappings, read once, at the first request
     * @return the filter
     */
    public static IdempotencyFilter filter(HttpIdempotency<?> layer, IdempotencyScope scope, ObjectProvider<HandlerMapping> mappings) {
        SingletonSupplier<List<HandlerMapping>> ordered = SingletonSupplier.of(() -> mappings.orderedStream().toList());
        return new IdempotencyFilter(layer, scope, ordered, IdempotencyFilter.DEFAULT_MAX_REQUEST_BYTES, IdempotencyFilter.DEFAULT_ORDER);
    }
}
