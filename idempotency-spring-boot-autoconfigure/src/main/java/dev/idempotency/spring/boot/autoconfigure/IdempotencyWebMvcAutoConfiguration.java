package dev.idempotency.spring.boot.autoconfigure;

import dev.idempotency.Idempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.spring.SpringTransactions;
import dev.idempotency.spring.webmvc.IdempotencyFilter;
import dev.idempotency.spring.webmvc.IdempotencyScope;
import dev.idempotency.spring.webmvc.IdempotentEndpoint;
import dev.idempotency.spring.webmvc.IdempotentEndpointsConfiguration;
import java.sql.Connection;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.HandlerMapping;

/**
 * Auto-configuration of {@link IdempotentEndpoint} controller methods in a servlet web application with the
 * engine of {@link IdempotencyAutoConfiguration} and one transaction manager. Beans, each left out
 * when the application defines its own of the same type:
 *
 * <ul>
 *   <li>{@link IdempotencyScope}: the authenticated principal's name;</li>
 *   <li>{@code HttpIdempotency<?>}: the HTTP layer's defaults, but for the replayed headers, the
 *       choice for a handler's 5xx and the expiry header of {@link IdempotencyHttpProperties}
 *       ({@code idempotency.http.replayed-headers}, {@code server-errors}, {@code expires-header}), on a
 *       {@link ManagedIdempotency} over {@link SpringTransactions} with the application's transaction
 *       manager and no retries (a servlet request cannot be dispatched twice; the client retries);</li>
 *   <li>{@link IdempotencyFilter}: registered by Boot for every request, applied to the annotated
 *       handlers only, in the order {@link IdempotencyFilter#DEFAULT_ORDER} (after Spring Security).</li>
 * </ul>
 * The layer and the filter are those of {@link IdempotentEndpointsConfiguration}, the configuration of
 * an application without Boot (which Boot's does not import: its beans back off one by one). Present
 * when the application has {@code idempotency-spring-webmvc} and Spring MVC on its class path.
 * The filter runs the handler in the transactional mode of the JDBC store: with
 * {@code idempotency.store=redis} or {@code dynamodb} (lease-only stores) none of these beans is built.
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({ DispatcherServlet.class, IdempotencyFilter.class })
@ConditionalOnBean(Idempotency.class)
@ConditionalOnProperty(name = "idempotency.store", havingValue = "jdbc", matchIfMissing = true)
@ConditionalOnSingleCandidate(PlatformTransactionManager.class)
@EnableConfigurationProperties(IdempotencyHttpProperties.class)
public class IdempotencyWebMvcAutoConfiguration {

    /** Created by Spring. */
    public IdempotencyWebMvcAutoConfiguration() {
    }

    /** @return the authenticated principal's name as the scope of every key */
    @Bean
    @ConditionalOnMissingBean
    public IdempotencyScope idempotencyScope() {
        return IdempotencyScope.userPrincipal();
    }

    /**
     * @param engine the engine
     * @param transactionManager the application's transaction manager
     * @param dataSource the application's data source
     * @param properties the settings ({@code idempotency.http.*})
     * @return the HTTP layer, its transactions through the transaction manager, without retries
     * @throws InvalidIdempotencyPropertyException naming {@code idempotency.http.replayed-headers} or
     *     {@code idempotency.http.expires-header} if a name is not a header name
     */
    @Bean
    @ConditionalOnMissingBean(HttpIdempotency.class)
    public HttpIdempotency<Connection> httpIdempotency(Idempotency<Connection> engine, PlatformTransactionManager transactionManager,
            DataSource dataSource, IdempotencyHttpProperties properties) {
        HttpIdempotency.Builder<Connection> layer = IdempotentEndpointsConfiguration.transactionalLayer(engine, transactionManager, dataSource);
        return properties.configure(layer).build();
    }

    /**
     * @param layer the HTTP layer
     * @param scope the scope of a request's key
     * @param mappings the application's handler mappings, looked up at the first request
     * @return the filter that applies {@link IdempotentEndpoint}
     */
    @Bean
    @ConditionalOnMissingBean
    public IdempotencyFilter idempotencyFilter(HttpIdempotency<?> layer, IdempotencyScope scope, ObjectProvider<HandlerMapping> mappings) {
        return IdempotentEndpointsConfiguration.filter(layer, scope, mappings);
    }
}
