package dev.idempotency.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.IdempotentCall;
import dev.idempotency.LeasedIdempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.ResultCodec;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.redis.RedisLeasingStore;
import dev.idempotency.spi.NoTransaction;
import dev.idempotency.spring.SpringIdempotency;
import dev.idempotency.testsupport.SpringBootLine;
import dev.idempotency.testsupport.TestEnvironment;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.mock.env.MockEnvironment;

/**
 * The choice of the store ({@link IdempotencyStoreChoice}) and lease mode on the Redis store
 * ({@link IdempotencyRedisAutoConfiguration}, {@link IdempotencyLeaseModeAutoConfiguration}), on the real Redis server of scripts/redis.sh
 * ({@code IDEMPOTENCY_REDIS_URI}).
 */
class RedisStoreAutoConfigurationTest {

    private static String uri;
    private static RedisClient client;

    private final ApplicationContextRunner redisOnly = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class, IdempotencyRedisAutoConfiguration.class,
                    IdempotencyLeaseModeAutoConfiguration.class, IdempotencyStoreAutoConfiguration.class));

    private final ApplicationContextRunner withDataSource = redisOnly
            .withConfiguration(AutoConfigurations.of(SpringBootLine.jdbcAutoConfigurations()))
            .withPropertyValues("spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
                    "spring.datasource.generate-unique-name=false");

    @BeforeAll
    static void server() {
        uri = TestEnvironment.require("IDEMPOTENCY_REDIS_URI", "start the Redis server with"
                + " `env_lines=\"$(scripts/redis.sh start single)\" && eval \"$env_lines\"` (scripts/test does it)").strip();
        client = RedisClient.create(uri);
    }

    @AfterAll
    static void shutdown() {
        client.shutdown();
    }

    @Configuration(proxyBeanMethods = false)
    static class ApplicationClient {
        @Bean(destroyMethod = "") // the tests' client, shared by the contexts: not shut down with each
        RedisClient redisClient() {
            return client;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class NeedsTransactionalMode {
        @Bean
        String orders(SpringIdempotency idempotency) {
            return "orders";
        }
    }

    /** @return the environment of an application with {@code idempotency.store} set to {@code store}, or unset */
    private static MockEnvironment store(String store) {
        MockEnvironment environment = new MockEnvironment();
        return store == null ? environment : environment.withProperty("idempotency.store", store);
    }

    // tag::lease-bean[]
    static class Payments {
        private final LeasedIdempotency<NoTransaction> idempotency;

        Payments(LeasedIdempotency<NoTransaction> idempotency) {
            this.idempotency = idempotency;
        }

        Outcome<String> charge(IdempotencyKey key, String order) {
            return idempotency.lease(IdempotentCall.of(key, ResultCodec.string()), attempt -> "charged " + order);
        }
    }
    // end::lease-bean[]

    @SuppressWarnings("unchecked") // the context's one LeasedIdempotency bean is on the Redis store
    private static LeasedIdempotency<NoTransaction> managed(AssertableApplicationContext context) {
        return context.getBean(LeasedIdempotency.class);
    }

    /** Runs a lease call twice through a bean injected with the engine: the first runs, the second replays. */
    private static void leasesAndReplays(AssertableApplicationContext context) {
        IdempotencyKey key = IdempotencyKey.of("boot", UUID.randomUUID().toString());
        Payments payments = context.getBean(Payments.class); // injected with LeasedIdempotency<NoTransaction>
        Outcome<String> first = payments.charge(key, "order-1");
        Outcome<String> second = payments.charge(key, "order-2");
        assertThat(first.isExecuted()).isTrue();
        assertThat(second.isExecuted()).isFalse();
        assertThat(second.value()).isEqualTo("charged order-1");
    }

    @Test
    void storeRedis_buildsLeaseModeOnRedis_fromTheUri() {
        redisOnly.withBean(Payments.class).withPropertyValues("idempotency.store=redis", "idempotency.redis.uri=" + uri).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(RedisLeasingStore.class).hasSingleBean(LeasedIdempotency.class).doesNotHaveBean(Idempotency.class)
                    .doesNotHaveBean(ManagedIdempotency.class).doesNotHaveBean(JdbcIdempotencyStore.class)
                    .doesNotHaveBean(SpringIdempotency.class);
            leasesAndReplays(context);
        });
    }

    @Test
    void unset_aRedisClientBeanAndNoDataSource_choosesRedis() {
        redisOnly.withBean(Payments.class).withUserConfiguration(ApplicationClient.class).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(RedisLeasingStore.class).doesNotHaveBean(JdbcIdempotencyStore.class);
            leasesAndReplays(context);
        });
    }

    @Test
    void theKafkaListenerBeansStandBackOnRedis_whichSharesNoTransactionWithTheListener() {
        redisOnly.withConfiguration(AutoConfigurations.of(IdempotencyKafkaAutoConfiguration.class)).withBean(Payments.class)
                .withUserConfiguration(ApplicationClient.class).run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(RedisLeasingStore.class)
                            .doesNotHaveBean(dev.idempotency.spring.kafka.SpringKafkaIdempotency.class);
                    leasesAndReplays(context);
                });
    }

    @Test
    void unset_aDataSourceWinsOverARedisClientBean() {
        withDataSource.withUserConfiguration(ApplicationClient.class).run(context -> assertThat(context).hasNotFailed()
                .hasSingleBean(JdbcIdempotencyStore.class).hasSingleBean(SpringIdempotency.class)
                .doesNotHaveBean(RedisLeasingStore.class));
    }

    @Test
    void storeRedis_winsOverADataSource() {
        withDataSource.withBean(Payments.class).withUserConfiguration(ApplicationClient.class).withPropertyValues("idempotency.store=redis").run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(RedisLeasingStore.class).doesNotHaveBean(JdbcIdempotencyStore.class)
                    .doesNotHaveBean(SpringIdempotency.class);
            leasesAndReplays(context);
        });
    }

    @Test
    void theKeyPrefixIsTheStores() {
        String prefix = "shop" + UUID.randomUUID().toString().substring(0, 8);
        redisOnly.withBean(Payments.class).withUserConfiguration(ApplicationClient.class)
                .withPropertyValues("idempotency.redis.key-prefix=" + prefix)
                .run(context -> {
                    leasesAndReplays(context);
                    try (StatefulRedisConnection<String, String> redis = client.connect()) {
                        assertThat(redis.sync().keys(prefix + ":*")).hasSize(1);
                    }
                });
    }

    @Test
    void waitReplicas_isSentAfterEachWrite_andRefusesWithoutThem() {
        // the single server has no replica: WAIT 1 returns 0, and the store refuses the claim it wrote
        redisOnly.withUserConfiguration(ApplicationClient.class)
                .withPropertyValues("idempotency.redis.wait-replicas=1", "idempotency.redis.wait-timeout=50ms").run(context -> {
                    IdempotentCall<String> call = IdempotentCall.of(IdempotencyKey.of("boot", UUID.randomUUID().toString()),
                            ResultCodec.string());
                    assertThatThrownBy(() -> managed(context).lease(call, attempt -> "never"))
                            .isInstanceOf(IdempotencyStoreException.class).hasMessageContaining("only 0 of 1 replicas");
                });
    }

    @Test
    void anUnknownStore_stopsTheStartup_namingTheProperty() {
        withDataSource.withPropertyValues("idempotency.store=foo").run(context -> assertThat(context).getFailure()
                .rootCause().isInstanceOf(InvalidIdempotencyPropertyException.class)
                .hasMessageContaining("idempotency.store = foo is refused: must be jdbc").hasMessageContaining("or redis"));
    }

    @Test
    void storeRedis_withoutAClientOrAUri_stopsTheStartup_namingTheProperty() {
        // blank: the environment of the tests' servers binds IDEMPOTENCY_REDIS_URI to idempotency.redis.uri
        redisOnly.withPropertyValues("idempotency.store=redis", "idempotency.redis.uri=").run(context -> assertThat(context).getFailure().rootCause()
                .isInstanceOf(InvalidIdempotencyPropertyException.class)
                .hasMessageContaining("idempotency.store = redis is refused: the Redis store needs a server")
                .hasMessageContaining("idempotency.redis.uri"));
    }

    @Test
    void storeRedis_withoutTheRedisStoreOnTheClassPath_stopsTheStartup_namingTheProperty() {
        redisOnly.withClassLoader(new FilteredClassLoader(RedisLeasingStore.class)).withPropertyValues("idempotency.store=redis")
                .run(context -> assertThat(context).getFailure().rootCause().isInstanceOf(InvalidIdempotencyPropertyException.class)
                        .hasMessageContaining("idempotency.store = redis is refused: the Redis store is not on the class path")
                        .hasMessageContaining("idempotency-redis"));
    }

    @Test
    void storeRedis_withoutLettuceOnTheClassPath_stopsTheStartup_namingTheProperty() {
        redisOnly.withClassLoader(new FilteredClassLoader(RedisClient.class)).withPropertyValues("idempotency.store=redis")
                .run(context -> assertThat(context).getFailure().rootCause().isInstanceOf(InvalidIdempotencyPropertyException.class)
                        .hasMessageContaining("idempotency.store = redis is refused: Lettuce is not on the class path"));
    }

    @Test
    void storeJdbc_withoutADataSource_stopsTheStartup_namingTheProperty() {
        redisOnly.withPropertyValues("idempotency.store=jdbc").run(context -> assertThat(context).getFailure().rootCause()
                .isInstanceOf(InvalidIdempotencyPropertyException.class)
                .hasMessageContaining("idempotency.store = jdbc is refused: the JDBC store needs the application's DataSource"));
    }

    @Test
    void storeRedis_andTheRecoveryWorker_stopsTheStartup_namingTheWorkersProperty() {
        redisOnly.withUserConfiguration(ApplicationClient.class).withPropertyValues("idempotency.store=redis",
                "idempotency.recovery.enabled=true").run(context -> assertThat(context).getFailure().rootCause()
                        .isInstanceOf(InvalidIdempotencyPropertyException.class)
                        .hasMessageContaining("idempotency.recovery.enabled = true is refused: the recovery worker needs a store that"
                                + " lists the operations left in progress"));
    }

    @Test
    void storeRedis_andATransactionalBeanAskedFor_saysTransactionalModeNeedsTheJdbcStore() {
        withDataSource.withUserConfiguration(ApplicationClient.class, NeedsTransactionalMode.class)
                .withPropertyValues("idempotency.store=redis").run(context -> {
                    Throwable failure = context.getStartupFailure();
                    assertThat(failure).isNotNull().hasRootCauseInstanceOf(NoSuchBeanDefinitionException.class);
                    FailureAnalysis analysis = new TransactionalModeFailureAnalyzer(store("redis")).analyze(failure);
                    assertThat(analysis).isNotNull();
                    assertThat(analysis.getDescription()).contains("SpringIdempotency")
                            .contains("idempotency.store=redis chose the Redis store, which serves lease mode only");
                    assertThat(analysis.getAction()).contains("LeasedIdempotency<NoTransaction>").contains("idempotency.store=jdbc");
                });
    }

    @Test
    void storeJdbc_andAMissingBean_isLeftToBootsOwnAnalysis() {
        withDataSource.withUserConfiguration(NeedsTransactionalMode.class).withPropertyValues("idempotency.store=jdbc",
                "idempotency.create-table=false").run(context -> assertThat(context).hasNotFailed());
        redisOnly.withUserConfiguration(NeedsTransactionalMode.class).run(context -> {
            assertThat(context.getStartupFailure()).isNotNull();
            assertThat(new TransactionalModeFailureAnalyzer(store(null)).analyze(context.getStartupFailure())).isNull();
        });
    }
}
