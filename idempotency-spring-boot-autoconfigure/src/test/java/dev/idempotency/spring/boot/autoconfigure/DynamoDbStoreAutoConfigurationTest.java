package dev.idempotency.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.LeasedIdempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.ResultCodec;
import dev.idempotency.StoreUnavailableException;
import dev.idempotency.dynamodb.DynamoDbLeasingStore;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.redis.RedisLeasingStore;
import dev.idempotency.spi.NoTransaction;
import dev.idempotency.spring.SpringIdempotency;
import dev.idempotency.testsupport.SpringBootLine;
import dev.idempotency.testsupport.TestEnvironment;
import io.lettuce.core.RedisClient;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
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
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.retry.RetryMode;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The choice of the DynamoDB store ({@link IdempotencyStoreChoice}, {@link IdempotencyDynamoDbAutoConfiguration})
 * and lease mode on it ({@link IdempotencyLeaseModeAutoConfiguration}), on the real dynalite server
 * of scripts/dynalite.sh ({@code IDEMPOTENCY_DYNALITE_ENDPOINT}). Each context has a table of its own,
 * created by {@code idempotency.create-table=true}.
 */
class DynamoDbStoreAutoConfigurationTest {

    private static String endpoint;
    private static DynamoDbClient client;

    private final ApplicationContextRunner dynamoDbOnly = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class, IdempotencyRedisAutoConfiguration.class,
                    IdempotencyDynamoDbAutoConfiguration.class, IdempotencyLeaseModeAutoConfiguration.class,
                    IdempotencyStoreAutoConfiguration.class))
            .withPropertyValues("idempotency.create-table=true", "idempotency.dynamodb.clock-calibration=0s");

    private final ApplicationContextRunner withDataSource = dynamoDbOnly
            .withConfiguration(AutoConfigurations.of(SpringBootLine.jdbcAutoConfigurations()))
            .withPropertyValues("spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
                    "spring.datasource.generate-unique-name=false");

    @BeforeAll
    static void server() {
        endpoint = TestEnvironment.require("IDEMPOTENCY_DYNALITE_ENDPOINT", "start the dynalite server with"
                + " `env_lines=\"$(scripts/dynalite.sh start)\" && eval \"$env_lines\"` (scripts/test does it)").strip();
        client = client(endpoint);
    }

    @AfterAll
    static void shutdown() {
        if (client != null) {
            client.close();
        }
    }

    private static DynamoDbClient client(String endpoint) {
        return DynamoDbClient.builder().endpointOverride(URI.create(endpoint)).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
                .overrideConfiguration(o -> o.apiCallTimeout(Duration.ofSeconds(5)).retryStrategy(RetryMode.STANDARD))
                .build();
    }

    /** @return a table name no other context uses */
    private static String table() {
        return "boot_" + UUID.randomUUID().toString().replace("-", "");
    }

    @Configuration(proxyBeanMethods = false)
    static class ApplicationClient {
        @Bean(destroyMethod = "") // the tests' client, shared by the contexts: not closed with each
        DynamoDbClient dynamoDbClient() {
            return client;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class ApplicationRedisClient {
        @Bean(destroyMethod = "shutdown") // never connected: created to be present, as an application's cache client would be
        RedisClient redisClient() {
            return RedisClient.create("redis://127.0.0.1:6379");
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class NeedsTransactionalMode {
        @Bean
        String orders(SpringIdempotency idempotency) {
            return "orders";
        }
    }

    static class Payments {
        private final LeasedIdempotency<NoTransaction> idempotency;
        final AtomicInteger charges = new AtomicInteger();

        Payments(LeasedIdempotency<NoTransaction> idempotency) {
            this.idempotency = idempotency;
        }

        Outcome<String> charge(IdempotencyKey key, String order) {
            return idempotency.lease(IdempotentCall.of(key, ResultCodec.string()), attempt -> {
                charges.incrementAndGet();
                return "charged " + order;
            });
        }
    }

    /** Runs a lease call twice through a bean injected with the engine: the first runs, the second replays. */
    private static void leasesAndReplays(AssertableApplicationContext context) {
        IdempotencyKey key = IdempotencyKey.of("boot", UUID.randomUUID().toString());
        Payments payments = context.getBean(Payments.class);
        Outcome<String> first = payments.charge(key, "order-1");
        Outcome<String> second = payments.charge(key, "order-2");
        assertThat(first.isExecuted()).isTrue();
        assertThat(second.isExecuted()).isFalse();
        assertThat(second.value()).isEqualTo("charged order-1");
        assertThat(payments.charges).hasValue(1);
    }

    @Test
    void storeDynamoDb_withAClientBean_buildsLeaseModeOnDynamoDb_andCreatesTheTable() {
        String table = table();
        dynamoDbOnly.withBean(Payments.class).withUserConfiguration(ApplicationClient.class)
                .withPropertyValues("idempotency.store=dynamodb", "idempotency.table=" + table).run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(DynamoDbLeasingStore.class).hasSingleBean(LeasedIdempotency.class).doesNotHaveBean(Idempotency.class)
                            .doesNotHaveBean(ManagedIdempotency.class).doesNotHaveBean(JdbcIdempotencyStore.class)
                            .doesNotHaveBean(RedisLeasingStore.class).doesNotHaveBean(SpringIdempotency.class);
                    assertThat(client.describeTable(r -> r.tableName(table)).table().tableName()).isEqualTo(table);
                    leasesAndReplays(context);
                });
    }

    @Test
    void unset_aDynamoDbClientBeanAndNoDataSource_choosesDynamoDb() {
        dynamoDbOnly.withBean(Payments.class).withUserConfiguration(ApplicationClient.class)
                .withPropertyValues("idempotency.table=" + table()).run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(DynamoDbLeasingStore.class)
                            .doesNotHaveBean(JdbcIdempotencyStore.class);
                    leasesAndReplays(context);
                });
    }

    @Test
    void unset_aDataSourceWinsOverADynamoDbClientBean() {
        withDataSource.withUserConfiguration(ApplicationClient.class).run(context -> assertThat(context).hasNotFailed()
                .hasSingleBean(JdbcIdempotencyStore.class).hasSingleBean(SpringIdempotency.class)
                .doesNotHaveBean(DynamoDbLeasingStore.class));
    }

    @Test
    void storeDynamoDb_winsOverADataSource() {
        withDataSource.withBean(Payments.class).withUserConfiguration(ApplicationClient.class)
                .withPropertyValues("idempotency.store=dynamodb", "idempotency.table=" + table()).run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(DynamoDbLeasingStore.class)
                            .doesNotHaveBean(JdbcIdempotencyStore.class).doesNotHaveBean(SpringIdempotency.class);
                    leasesAndReplays(context);
                });
    }

    @Test
    void theClientIsBuiltFromTheRegionAndEndpoint_whenThereIsNoBean() {
        // the SDK's default credentials: its system properties, the only part of the environment set here
        String id = System.getProperty("aws.accessKeyId");
        String secret = System.getProperty("aws.secretAccessKey");
        System.setProperty("aws.accessKeyId", "test");
        System.setProperty("aws.secretAccessKey", "test");
        try {
            dynamoDbOnly.withBean(Payments.class).withPropertyValues("idempotency.store=dynamodb", "idempotency.table=" + table(),
                    "idempotency.dynamodb.region=eu-west-1", "idempotency.dynamodb.endpoint=" + endpoint).run(context -> {
                        assertThat(context).hasNotFailed().hasSingleBean(DynamoDbLeasingStore.class);
                        leasesAndReplays(context);
                    });
        } finally {
            restore("aws.accessKeyId", id);
            restore("aws.secretAccessKey", secret);
        }
    }

    private static void restore(String property, String value) {
        if (value == null) {
            System.clearProperty(property);
        } else {
            System.setProperty(property, value);
        }
    }

    @Test
    void thePowertoolsLayoutAndTheKeyPrefix_nameTheItems() {
        String table = table();
        dynamoDbOnly.withBean(Payments.class).withUserConfiguration(ApplicationClient.class)
                .withPropertyValues("idempotency.table=" + table, "idempotency.dynamodb.layout=powertools",
                        "idempotency.dynamodb.key-prefix=shop").run(context -> {
                    leasesAndReplays(context);
                    var items = client.scan(r -> r.tableName(table).consistentRead(true)).items();
                    assertThat(items).hasSize(1);
                    Map<String, AttributeValue> item = items.get(0);
                    assertThat(item.get("id").s()).startsWith("shop#");
                    assertThat(item).containsKey("expiration");
                });
    }

    @Test
    void whenUnavailable_refusesByDefault_andRunsWithoutDeduplicationWhenAskedTo() throws IOException {
        int closed;
        try (ServerSocket socket = new ServerSocket(0)) {
            closed = socket.getLocalPort(); // free once closed: nothing listens there
        }
        DynamoDbClient down = client("http://127.0.0.1:" + closed);
        try {
            ApplicationContextRunner onADownServer = new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(IdempotencyDynamoDbAutoConfiguration.class,
                            IdempotencyLeaseModeAutoConfiguration.class, IdempotencyStoreAutoConfiguration.class))
                    .withBean(DynamoDbClient.class, () -> down, d -> d.setDestroyMethodName(""))
                    .withBean(Payments.class)
                    .withPropertyValues("idempotency.dynamodb.clock-calibration=0s");
            IdempotencyKey key = IdempotencyKey.of("boot", UUID.randomUUID().toString());
            onADownServer.run(context -> assertThatThrownBy(() -> context.getBean(Payments.class).charge(key, "order-1"))
                    .isInstanceOf(StoreUnavailableException.class)
                    .hasMessageContaining("could not be reached for the clock probe before the claim")); // the first call of the client
            onADownServer.withPropertyValues("idempotency.when-unavailable=run-without-deduplication").run(context -> {
                Payments payments = context.getBean(Payments.class);
                assertThat(payments.charge(key, "order-1").isExecuted()).isTrue();
                assertThat(payments.charge(key, "order-1").isExecuted()).isTrue(); // no record: it runs again
                assertThat(payments.charges).hasValue(2);
            });
        } finally {
            down.close();
        }
    }

    @Test
    void aClientBeanOfEachLeaseOnlyStore_andNoDataSource_stopsTheStartup_askingForTheProperty() {
        dynamoDbOnly.withUserConfiguration(ApplicationClient.class, ApplicationRedisClient.class).run(context -> assertThat(context)
                .getFailure().rootCause().isInstanceOf(InvalidIdempotencyPropertyException.class)
                .hasMessageContaining("idempotency.store = (unset) is refused: there is no DataSource, and client beans of"
                        + " the Redis store (RedisClient) and the DynamoDB store (DynamoDbClient)")
                .hasMessageContaining("set idempotency.store to redis or dynamodb"));
    }

    @Test
    void storeDynamoDb_withoutTheStoreOnTheClassPath_stopsTheStartup_namingTheProperty() {
        dynamoDbOnly.withClassLoader(new FilteredClassLoader(DynamoDbLeasingStore.class)).withPropertyValues("idempotency.store=dynamodb")
                .run(context -> assertThat(context).getFailure().rootCause().isInstanceOf(InvalidIdempotencyPropertyException.class)
                        .hasMessageContaining("idempotency.store = dynamodb is refused: the DynamoDB store is not on the class path")
                        .hasMessageContaining("idempotency-dynamodb"));
    }

    @Test
    void storeDynamoDb_withoutTheSdkOnTheClassPath_stopsTheStartup_namingTheProperty() {
        dynamoDbOnly.withClassLoader(new FilteredClassLoader(DynamoDbClient.class)).withPropertyValues("idempotency.store=dynamodb")
                .run(context -> assertThat(context).getFailure().rootCause().isInstanceOf(InvalidIdempotencyPropertyException.class)
                        .hasMessageContaining("idempotency.store = dynamodb is refused: the AWS SDK's DynamoDB client is not on the"
                                + " class path"));
    }

    @Test
    void badDynamoDbSettings_stopTheStartup_namingTheirProperty() {
        dynamoDbOnly.withUserConfiguration(ApplicationClient.class).withPropertyValues("idempotency.dynamodb.layout=flat")
                .run(context -> assertThat(context).getFailure().rootCause().isInstanceOf(InvalidIdempotencyPropertyException.class)
                        .hasMessageContaining("idempotency.dynamodb.layout = flat is refused: must be library"));
        dynamoDbOnly.withUserConfiguration(ApplicationClient.class).withPropertyValues("idempotency.table=x")
                .run(context -> assertThat(context).getFailure() // the store's refusal is the cause
                        .hasMessageContaining("idempotency.table = x is refused: the table's name must be 3 to 255"));
        dynamoDbOnly.withPropertyValues("idempotency.store=dynamodb", "idempotency.dynamodb.region=eu-west-1",
                "idempotency.dynamodb.endpoint=localhost-8000")
                .run(context -> assertThat(context).getFailure().rootCause().isInstanceOf(InvalidIdempotencyPropertyException.class)
                        .hasMessageContaining("idempotency.dynamodb.endpoint = localhost-8000 is refused: must be an absolute URI"));
    }

    @Test
    void storeDynamoDb_andTheRecoveryWorker_stopsTheStartup_namingTheWorkersProperty() {
        dynamoDbOnly.withUserConfiguration(ApplicationClient.class).withPropertyValues("idempotency.store=dynamodb",
                "idempotency.recovery.enabled=true").run(context -> assertThat(context).getFailure().rootCause()
                        .isInstanceOf(InvalidIdempotencyPropertyException.class)
                        .hasMessageContaining("idempotency.recovery.enabled = true is refused: the recovery worker needs a store that"
                                + " lists the operations left in progress")
                        .hasMessageContaining("idempotency.store=dynamodb chose the DynamoDB store"));
    }

    @Test
    void storeDynamoDb_andATransactionalBeanAskedFor_saysTransactionalModeNeedsTheJdbcStore() {
        withDataSource.withUserConfiguration(ApplicationClient.class, NeedsTransactionalMode.class)
                .withPropertyValues("idempotency.store=dynamodb", "idempotency.table=" + table()).run(context -> {
                    Throwable failure = context.getStartupFailure();
                    assertThat(failure).isNotNull().hasRootCauseInstanceOf(NoSuchBeanDefinitionException.class);
                    FailureAnalysis analysis = new TransactionalModeFailureAnalyzer(
                            new MockEnvironment().withProperty("idempotency.store", "dynamodb")).analyze(failure);
                    assertThat(analysis).isNotNull();
                    assertThat(analysis.getDescription()).contains("SpringIdempotency")
                            .contains("idempotency.store=dynamodb chose the DynamoDB store, which serves lease mode only");
                    assertThat(analysis.getAction()).contains("Use lease mode on the DynamoDB store").contains("idempotency.store=jdbc");
                });
    }
}
