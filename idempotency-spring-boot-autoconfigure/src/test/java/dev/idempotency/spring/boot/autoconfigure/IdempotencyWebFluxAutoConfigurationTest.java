package dev.idempotency.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.jdbc.dialect.PostgresDialect;
import dev.idempotency.jdbc.dialect.TableName;
import dev.idempotency.r2dbc.R2dbcIdempotency;
import dev.idempotency.spring.webflux.WebFluxScope;
import dev.idempotency.spring.webflux.IdempotencyWebFilter;
import dev.idempotency.spring.webflux.IdempotentWebFluxEndpoint;
import dev.idempotency.testsupport.DatabaseServer;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryOptions;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.transaction.reactive.TransactionalOperator;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.DispatcherHandler;
import org.springframework.web.reactive.config.EnableWebFlux;
import reactor.core.publisher.Mono;

/**
 * The WebFlux auto-configuration's beans, its backing off for the application's own, and its
 * standing back without WebFlux, without a {@code ConnectionFactory}, outside a reactive
 * application and for a lease-only store. The connection factory is r2dbc-postgresql's, which
 * connects only when asked: only the replay of the expiry header does, to the PostgreSQL server of
 * the environment.
 */
class IdempotencyWebFluxAutoConfigurationTest {

    private static final AutoConfigurations CONFIGURATIONS = AutoConfigurations.of(IdempotencyWebFluxAutoConfiguration.class);

    private static ConnectionFactory postgres() {
        return ConnectionFactories.get("r2dbc:postgresql://unused:unused@127.0.0.1:1/unused");
    }

    private final ReactiveWebApplicationContextRunner reactive = new ReactiveWebApplicationContextRunner()
            .withConfiguration(CONFIGURATIONS)
            .withBean(ConnectionFactory.class, IdempotencyWebFluxAutoConfigurationTest::postgres)
            .withBean(R2dbcTransactionManager.class, () -> new R2dbcTransactionManager(postgres()));

    @Test
    void aReactiveApplicationOnR2dbcGetsTheEngineOnItsDialectTheFilterAndThePrincipalAsScope() {
        reactive.withPropertyValues("idempotency.table=orders_idempotency", "idempotency.lock-timeout=3s").run(context -> {
            assertThat(context).hasSingleBean(R2dbcIdempotency.class).hasSingleBean(IdempotencyWebFilter.class)
                    .hasSingleBean(WebFluxScope.class);
            R2dbcIdempotency engine = context.getBean(R2dbcIdempotency.class);
            assertThat(engine.dialect()).isInstanceOf(PostgresDialect.class);
            assertThat(engine.table().simpleName()).isEqualTo("orders_idempotency");
            assertThat(engine.keyPolicy().lockTimeout()).isEqualTo(Duration.ofSeconds(3));
            assertThat(context.getBean(IdempotencyWebFilter.class).getOrder()).isEqualTo(IdempotencyWebFilter.DEFAULT_ORDER);
        });
    }

    /** A handler the auto-configured filter runs. */
    @RestController
    static class Payments {
        @PostMapping("/payments")
        @IdempotentWebFluxEndpoint
        Mono<String> pay() {
            return Mono.just("paid");
        }
    }

    @Test
    void aReplayCarriesTheExpiryHeaderThePropertyNames() {
        DatabaseServer server = DatabaseServer.postgres();
        ConnectionFactory database = ConnectionFactories.get(ConnectionFactoryOptions.parse("r2dbc:" + server.url().substring("jdbc:".length()))
                .mutate().option(ConnectionFactoryOptions.USER, server.user()).option(ConnectionFactoryOptions.PASSWORD, server.password()).build());
        R2dbcIdempotency.builder(new PostgresDialect()).table(TableName.of("boot_webflux_record")).build().createTableIfMissing(database)
                .block(Duration.ofSeconds(30));
        new ReactiveWebApplicationContextRunner().withConfiguration(CONFIGURATIONS)
                .withUserConfiguration(EnableWebFluxConfiguration.class, Payments.class)
                .withBean(ConnectionFactory.class, () -> database)
                .withBean(R2dbcTransactionManager.class, () -> new R2dbcTransactionManager(database))
                .withBean(WebFluxScope.class, () -> exchange -> Mono.just("tenant"))
                .withPropertyValues("idempotency.table=boot_webflux_record", "idempotency.http.expires-header=Idempotency-Key-Expires")
                .run(context -> {
                    WebTestClient client = WebTestClient.bindToApplicationContext(context).build();
                    String key = "pay-" + UUID.randomUUID();
                    client.post().uri("/payments").header("Idempotency-Key", key).exchange()
                            .expectStatus().isOk().expectHeader().doesNotExist("Idempotency-Key-Expires");
                    client.post().uri("/payments").header("Idempotency-Key", key).exchange()
                            .expectStatus().isOk().expectHeader().valueEquals(HttpIdempotency.REPLAYED_HEADER, "true")
                            .expectHeader().exists("Idempotency-Key-Expires")
                            .expectBody(String.class).isEqualTo("paid");
                });
    }

    /** Spring WebFlux's handler mappings, which Boot's own WebFlux auto-configuration would bring. */
    @Configuration(proxyBeanMethods = false)
    @EnableWebFlux
    static class EnableWebFluxConfiguration {
    }

    @Test
    void aMalformedReplayedHeaderStopsTheStartupNamingTheProperty() {
        reactive.withPropertyValues("idempotency.http.replayed-headers=Content-Type,Set Cookie").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasStackTraceContaining("idempotency.http.replayed-headers = Content-Type,Set Cookie is refused");
        });
    }

    @Test
    void aHandlers5xxIsRecordedByDefault_orReleasedByTheProperty_andTheExpiryHeaderIsOffUnlessNamed() {
        reactive.run(context -> assertThat(context.getBean(IdempotencyWebFilter.class).toString()).contains("serverErrors=RECORD")
                .doesNotContain("expiresHeader"));
        reactive.withPropertyValues("idempotency.http.server-errors=release", "idempotency.http.expires-header=Idempotency-Key-Expires")
                .run(context -> assertThat(context.getBean(IdempotencyWebFilter.class).toString()).contains("serverErrors=RELEASE")
                        .contains("expiresHeader=Idempotency-Key-Expires"));
        reactive.withPropertyValues("idempotency.http.expires-header=Key Expires").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasStackTraceContaining("idempotency.http.expires-header = Key Expires is refused");
        });
    }

    @Test
    void theApplicationsOwnEngineScopeAndFilterWin() {
        R2dbcIdempotency engine = R2dbcIdempotency.builder(new PostgresDialect()).build();
        WebFluxScope tenant = exchange -> reactor.core.publisher.Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-Tenant"));
        IdempotencyWebFilter own = IdempotencyWebFilter.builder(engine, postgres(),
                TransactionalOperator.create(new R2dbcTransactionManager(postgres())), List::of).order(7).build();
        reactive.withBean(R2dbcIdempotency.class, () -> engine).withBean(WebFluxScope.class, () -> tenant).run(context -> {
            assertThat(context.getBean(R2dbcIdempotency.class)).isSameAs(engine);
            assertThat(context.getBean(WebFluxScope.class)).isSameAs(tenant);
        });
        reactive.withBean(IdempotencyWebFilter.class, () -> own).run(context -> assertThat(context.getBean(IdempotencyWebFilter.class)).isSameAs(own));
    }

    @Test
    void itStandsBackWithoutAConnectionFactory_withoutWebFlux_outsideAReactiveApplication_andForALeaseOnlyStore() {
        new ReactiveWebApplicationContextRunner().withConfiguration(CONFIGURATIONS)
                .run(context -> assertThat(context).doesNotHaveBean(IdempotencyWebFilter.class).doesNotHaveBean(R2dbcIdempotency.class));
        reactive.withClassLoader(new FilteredClassLoader(DispatcherHandler.class))
                .run(context -> assertThat(context).doesNotHaveBean(IdempotencyWebFilter.class).doesNotHaveBean(R2dbcIdempotency.class));
        new WebApplicationContextRunner().withConfiguration(CONFIGURATIONS)
                .withBean(ConnectionFactory.class, IdempotencyWebFluxAutoConfigurationTest::postgres)
                .run(context -> assertThat(context).doesNotHaveBean(IdempotencyWebFilter.class));
        reactive.withPropertyValues("idempotency.store=redis")
                .run(context -> assertThat(context).doesNotHaveBean(IdempotencyWebFilter.class).doesNotHaveBean(R2dbcIdempotency.class));
    }
}
