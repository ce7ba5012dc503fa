package dev.idempotency.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.LeasedIdempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.http.ServerErrors;
import dev.idempotency.spring.webmvc.IdempotencyFilter;
import dev.idempotency.spring.webmvc.IdempotencyScope;
import dev.idempotency.testsupport.SpringBootLine;
import dev.idempotency.testsupport.TestEnvironment;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.mock.web.MockHttpServletRequest;

/** The auto-configuration's beans, and its backing off for the application's own, in contexts of their own. */
class IdempotencyWebMvcAutoConfigurationTest {

    /** Boot's JDBC auto-configuration of the line on the class path (4 or 3), and the library's. */
    private static final AutoConfigurations JDBC = AutoConfigurations.of(SpringBootLine.jdbcAutoConfigurations());
    private static final AutoConfigurations CONFIGURATIONS = AutoConfigurations.of(IdempotencyAutoConfiguration.class,
            IdempotencyWebMvcAutoConfiguration.class);

    private final WebApplicationContextRunner web = new WebApplicationContextRunner()
            .withConfiguration(JDBC).withConfiguration(CONFIGURATIONS)
            .withPropertyValues("spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");

    @Test
    void aServletApplicationGetsTheFilterTheLayerAndThePrincipalAsScope() {
        web.run(context -> {
            assertThat(context).hasSingleBean(IdempotencyFilter.class).hasSingleBean(HttpIdempotency.class)
                    .hasSingleBean(IdempotencyScope.class);
            assertThat(context.getBean(IdempotencyFilter.class).getOrder()).isEqualTo(IdempotencyFilter.DEFAULT_ORDER);
            MockHttpServletRequest request = new MockHttpServletRequest("POST", "/payments");
            assertThat(context.getBean(IdempotencyScope.class).scopeOf(request)).isNull();
            request.setUserPrincipal(() -> "shop-a");
            assertThat(context.getBean(IdempotencyScope.class).scopeOf(request)).isEqualTo("shop-a");
        });
    }

    @Test
    void theReplayedHeadersAreTheLayersDefault_orTheProperty_andAMalformedNameStopsTheStartupNamingIt() {
        web.run(context -> assertThat(context.getBean(IdempotencyHttpProperties.class).getReplayedHeaders())
                .containsExactlyInAnyOrderElementsOf(HttpIdempotency.DEFAULT_REPLAYED_HEADERS));
        web.withPropertyValues("idempotency.http.replayed-headers=Content-Type,Set-Cookie").run(context -> assertThat(
                context.getBean(IdempotencyHttpProperties.class).getReplayedHeaders()).containsExactly("Content-Type", "Set-Cookie"));
        web.withPropertyValues("idempotency.http.replayed-headers=Content-Type,Set Cookie").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasStackTraceContaining(
                    "idempotency.http.replayed-headers = Content-Type,Set Cookie is refused");
        });
    }

    @Test
    void aHandlers5xxIsRecordedByDefault_orReleasedByTheProperty_andTheExpiryHeaderIsOffUnlessNamed() {
        web.run(context -> assertThat(context.getBean(HttpIdempotency.class).serverErrors()).isEqualTo(ServerErrors.RECORD));
        web.withPropertyValues("idempotency.http.server-errors=release", "idempotency.http.expires-header=Idempotency-Key-Expires")
                .run(context -> {
                    HttpIdempotency<?> layer = context.getBean(HttpIdempotency.class);
                    assertThat(layer.serverErrors()).isEqualTo(ServerErrors.RELEASE);
                    assertThat(layer.toString()).contains("expiresHeader=Idempotency-Key-Expires");
                });
        web.run(context -> assertThat(context.getBean(HttpIdempotency.class).toString()).doesNotContain("expiresHeader"));
        web.withPropertyValues("idempotency.http.expires-header=Key Expires").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasStackTraceContaining("idempotency.http.expires-header = Key Expires is refused");
        });
    }

    @Test
    void theApplicationsOwnScopeAndLayerWin() {
        IdempotencyScope tenant = request -> request.getHeader("X-Tenant");
        HttpIdempotency<?> layer = HttpIdempotency.builder(dev.idempotency.jdbc.Idempotent.managed(new JdbcDataSource())).keyRequired(false).build();
        web.withBean(IdempotencyScope.class, () -> tenant).withBean(HttpIdempotency.class, () -> layer).run(context -> {
            assertThat(context.getBean(IdempotencyScope.class)).isSameAs(tenant);
            assertThat(context.getBean(HttpIdempotency.class)).isSameAs(layer);
            assertThat(context).hasSingleBean(IdempotencyFilter.class);
        });
    }

    @Test
    void theApplicationsOwnFilterWins() {
        IdempotencyFilter own = new IdempotencyFilter(HttpIdempotency.builder(dev.idempotency.jdbc.Idempotent.managed(new JdbcDataSource())).build(),
                IdempotencyScope.userPrincipal(), List::of, 1024, 5);
        web.withBean(IdempotencyFilter.class, () -> own).run(context -> assertThat(context.getBean(IdempotencyFilter.class)).isSameAs(own));
    }

    @Test
    void theRedisStore_buildsNoFilter_forTheFilterRunsTransactionalMode() {
        String uri = TestEnvironment.require("IDEMPOTENCY_REDIS_URI", "start the Redis server with"
                + " `env_lines=\"$(scripts/redis.sh start single)\" && eval \"$env_lines\"` (scripts/test does it)").strip();
        web.withConfiguration(AutoConfigurations.of(IdempotencyRedisAutoConfiguration.class, IdempotencyLeaseModeAutoConfiguration.class))
                .withPropertyValues("idempotency.store=redis", "idempotency.redis.uri=" + uri)
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(LeasedIdempotency.class)
                        .doesNotHaveBean(ManagedIdempotency.class).doesNotHaveBean(HttpIdempotency.class).doesNotHaveBean(IdempotencyFilter.class));
    }

    @Test
    void nothingOutsideAServletApplication() {
        new ApplicationContextRunner().withConfiguration(JDBC).withConfiguration(CONFIGURATIONS)
                .withPropertyValues("spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1")
                .run(context -> assertThat(context).hasSingleBean(DataSource.class).doesNotHaveBean(IdempotencyFilter.class));
    }
}
