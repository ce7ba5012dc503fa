package dev.idempotency.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Idempotency;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.KeyPolicy;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.Outcome;
import dev.idempotency.jdbc.Idempotent;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.jdbc.NonDurableCommitsException;
import dev.idempotency.micrometer.MicrometerIdempotencyListener;
import dev.idempotency.spring.SpringIdempotency;
import dev.idempotency.testsupport.SpringBootLine;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/** The auto-configuration's beans, properties, table creation and metrics, in contexts of their own. */
class IdempotencyAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SpringBootLine.jdbcAutoConfigurations())) // Boot 4's or Boot 3's
            .withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class, IdempotencyMetricsAutoConfiguration.class))
            .withPropertyValues("spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
                    "spring.datasource.generate-unique-name=false");

    private static boolean tableExists(ApplicationContext context, String table) {
        return new JdbcTemplate(context.getBean(DataSource.class)).queryForObject(
                "select count(*) from information_schema.tables where lower(table_name) = ?", Integer.class, table) == 1;
    }

    private static <T> Outcome<T> inTransaction(ApplicationContext context, IdempotencyKey key, dev.idempotency.Work<T, RuntimeException> work) {
        SpringIdempotency idempotency = context.getBean(SpringIdempotency.class);
        return new TransactionTemplate(context.getBean(PlatformTransactionManager.class))
                .execute(status -> idempotency.execute(key, work));
    }

    @Test
    void theDefaults_andNoTableUnlessAskedFor() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(JdbcIdempotencyStore.class).hasSingleBean(Idempotency.class)
                    .hasSingleBean(SpringIdempotency.class).hasSingleBean(ManagedIdempotency.class)
                    .doesNotHaveBean(MicrometerIdempotencyListener.class);
            KeyPolicy policy = context.getBean(Idempotency.class).keyPolicy();
            assertThat(policy.retention()).isEqualTo(KeyPolicy.DEFAULT_RETENTION);
            assertThat(policy.lockTimeout()).isEqualTo(KeyPolicy.DEFAULT_LOCK_TIMEOUT);
            assertThat(policy.maxResultBytes()).isEqualTo(KeyPolicy.DEFAULT_MAX_RESULT_BYTES);
            assertThat(context.getBean(JdbcIdempotencyStore.class).table()).hasToString("idempotency_record");
            assertThat(tableExists(context, "idempotency_record")).isFalse();
        });
    }

    @Test
    void thePropertiesSetTheTableAndTheKeyPolicy_andCreateTableCreatesIt() {
        runner.withPropertyValues("idempotency.table=shop_keys", "idempotency.retention=7d", "idempotency.lock-timeout=2s",
                "idempotency.max-result-size=64KB", "idempotency.create-table=true").run(context -> {
                    KeyPolicy policy = context.getBean(Idempotency.class).keyPolicy();
                    assertThat(policy.retention()).isEqualTo(Duration.ofDays(7));
                    assertThat(policy.lockTimeout()).isEqualTo(Duration.ofSeconds(2));
                    assertThat(policy.maxResultBytes()).isEqualTo(64 * 1024);
                    assertThat(tableExists(context, "shop_keys")).isTrue();

                    IdempotencyKey key = IdempotencyKey.of("t", "k");
                    assertThat(inTransaction(context, key, () -> "first").status()).isEqualTo(Outcome.Status.EXECUTED);
                    assertThat(inTransaction(context, key, () -> "second").value()).isEqualTo("first");
                    ManagedIdempotency<?> managed = context.getBean(ManagedIdempotency.class);
                    assertThat(managed.execute(key, tx -> "third").value()).isEqualTo("first");
                });
    }

    @Test
    void keyFormatUuidRefusesAKeyThatIsNotAUuidOfVersionFourOrSeven() {
        runner.withPropertyValues("idempotency.key-format=uuid", "idempotency.create-table=true").run(context -> {
            KeyPolicy policy = context.getBean(Idempotency.class).keyPolicy();
            assertThat(policy.idFormat()).isEqualTo(KeyPolicy.IdFormat.UUID);
            ManagedIdempotency<?> managed = context.getBean(ManagedIdempotency.class);
            assertThatThrownBy(() -> managed.execute(IdempotencyKey.of("t", "42"), tx -> "ran"))
                    .isInstanceOf(dev.idempotency.InvalidKeyException.class).hasMessageContaining("must be a UUID");
            String uuid = java.util.UUID.randomUUID().toString();
            assertThat(managed.execute(IdempotencyKey.of("t", uuid), tx -> "ran").value()).isEqualTo("ran");
        });
        runner.run(context -> assertThat(context.getBean(Idempotency.class).keyPolicy().idFormat()).isEqualTo(KeyPolicy.IdFormat.ANY));
    }

    /** The listener beans are given to the engine alone, which hands them to the store: they hear its report. */
    @Test
    void theListenerBeansHearTheStoresReportOfCommitsThatAreNotDurable(@TempDir Path dir) {
        List<String> heard = new CopyOnWriteArrayList<>();
        runner.withPropertyValues("spring.datasource.url=jdbc:h2:file:" + dir.resolve("db"))
                .withBean(IdempotencyListener.class, () -> new IdempotencyListener() {
                    @Override
                    public void onNonDurableCommits(String database, String setting) {
                        heard.add(database + ": " + setting);
                    }
                }).run(context -> {
                    IdempotencyKey key = IdempotencyKey.of("t", "k");
                    for (int i = 0; i < 2; i++) {
                        assertThatThrownBy(() -> inTransaction(context, key, () -> "never")).isInstanceOf(NonDurableCommitsException.class);
                    }
                    assertThat(heard).singleElement().asString().startsWith("H2: H2 WRITE_DELAY=500");
                });
    }

    @Test
    void aBadValueFailsTheStartup_namingTheProperty() {
        runner.withPropertyValues("idempotency.lock-timeout=-1s").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(IllegalArgumentException.class);
            assertThat(context.getStartupFailure()).hasStackTraceContaining("idempotency.lock-timeout = PT-1S is refused");
        });
        runner.withPropertyValues("idempotency.table=order").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasStackTraceContaining("idempotency.table = order is refused")
                    .hasStackTraceContaining("reserved word");
        });
    }

    @Test
    void aResultSizeOutOfRangeIsReportedAsWritten_withTheRange_notClamped() {
        runner.withPropertyValues("idempotency.max-result-size=100GB").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(InvalidIdempotencyPropertyException.class)
                    .hasMessage("idempotency.max-result-size = 100GB is refused: must be between 0B and 16MB (16777216 bytes)");
        });
        runner.withPropertyValues("idempotency.max-result-size=16777217B").run(context -> assertThat(context.getStartupFailure())
                .hasStackTraceContaining("idempotency.max-result-size = 16777217B is refused: must be between 0B and 16MB"));
        runner.withPropertyValues("idempotency.max-result-size=16MB").run(context ->
                assertThat(context.getBean(Idempotency.class).keyPolicy().maxResultBytes()).isEqualTo(16 * 1024 * 1024));
    }

    @Test
    void withoutADataSource_nothing() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(Idempotency.class)
                        .doesNotHaveBean(SpringIdempotency.class));
    }

    @Test
    void theApplicationsOwnEngineWins() {
        Idempotency<Connection> own = Idempotent.builder().keyPolicy(KeyPolicy.builder().retention(Duration.ofDays(30)).build())
                .build();
        runner.withBean("ownIdempotency", Idempotency.class, () -> own).run(context -> {
            assertThat(context).hasSingleBean(Idempotency.class);
            assertThat(context.getBean(SpringIdempotency.class).engine()).isSameAs(own);
        });
    }

    @Test
    void metrics_aTimerPerOutcome_aCounterPerErrorType_neverTheKey_andTheScopeOnlyWhenAsked() {
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).withPropertyValues("idempotency.create-table=true")
                .run(context -> {
                    assertThat(context).hasSingleBean(MicrometerIdempotencyListener.class);
                    IdempotencyKey key = IdempotencyKey.of("tenant-7", "secret-key-id");
                    inTransaction(context, key, () -> "ok");
                    inTransaction(context, key, () -> "again");
                    assertThatThrownBy(() -> inTransaction(context, IdempotencyKey.of("tenant-7", "k2"), () -> {
                        throw new IllegalStateException("boom");
                    })).isInstanceOf(IllegalStateException.class);

                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    assertThat(registry.get(MicrometerIdempotencyListener.EXECUTIONS).tag("outcome", "executed").timer().count())
                            .isEqualTo(1);
                    assertThat(registry.get(MicrometerIdempotencyListener.EXECUTIONS).tag("outcome", "replayed").timer().count())
                            .isEqualTo(1);
                    assertThat(registry.get(MicrometerIdempotencyListener.EXECUTIONS).tag("outcome", "error").timer().count())
                            .isEqualTo(1);
                    assertThat(registry.get(MicrometerIdempotencyListener.ERRORS).tag("error", "IllegalStateException")
                            .counter().count()).isEqualTo(1);
                    for (Meter meter : registry.getMeters()) {
                        assertThat(meter.getId().getTags()).noneMatch(t -> t.getValue().contains("secret-key-id")
                                || t.getKey().equals("scope"));
                    }
                });
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withPropertyValues("idempotency.create-table=true", "idempotency.metrics.scope-tag=true").run(context -> {
                    inTransaction(context, IdempotencyKey.of("tenant-7", "k"), () -> "ok");
                    assertThat(context.getBean(MeterRegistry.class).get(MicrometerIdempotencyListener.EXECUTIONS)
                            .tags("outcome", "executed", "scope", "tenant-7").timer().count()).isEqualTo(1);
                });
    }

    @Test
    void noMetricsWithoutARegistry_orWithoutMicrometer_orWhenDisabled() {
        runner.run(context -> assertThat(context).doesNotHaveBean(MicrometerIdempotencyListener.class));
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).withPropertyValues("idempotency.metrics.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(MicrometerIdempotencyListener.class));
        runner.withClassLoader(new FilteredClassLoader(MeterRegistry.class))
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(Idempotency.class)
                        .doesNotHaveBean(MicrometerIdempotencyListener.class));
    }
}
