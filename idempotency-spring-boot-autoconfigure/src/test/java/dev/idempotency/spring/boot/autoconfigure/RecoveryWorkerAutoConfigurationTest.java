package dev.idempotency.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.Outcome;
import dev.idempotency.NamedPhases;
import dev.idempotency.Phases;
import dev.idempotency.RecoveringLeasedIdempotency;
import dev.idempotency.RecoveryWorker;
import dev.idempotency.ResultCodec;
import dev.idempotency.testsupport.SpringBootLine;
import java.io.IOException;
import java.sql.Connection;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;

/** The recovery worker of the auto-configuration: one property starts it over the {@code NamedPhases} beans. */
class RecoveryWorkerAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SpringBootLine.jdbcAutoConfigurations())) // Boot 4's or Boot 3's
            .withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
            .withPropertyValues("spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
                    "spring.datasource.generate-unique-name=false", "idempotency.create-table=true")
            .withUserConfiguration(Operations.class);

    /** A payment provider whose first call times out. */
    static final class FlakyProvider {
        final AtomicInteger calls = new AtomicInteger();

        String charge(String downstreamKey, String order) throws IOException {
            if (calls.incrementAndGet() == 1) {
                throw new IOException("provider timed out");
            }
            return "charged " + order + " under " + downstreamKey;
        }
    }

    /** The application's operations: one named, which the worker resumes, and one unnamed, which it ignores. */
    @Configuration(proxyBeanMethods = false)
    static class Operations {
        static final FlakyProvider provider = new FlakyProvider();

        // tag::phases-bean[]
        @Bean
        NamedPhases<Connection, String, Exception> chargePhases() {
            return Phases.<Connection, String, Exception>prepare(tx -> "order-7", ResultCodec.string())
                    .call((attempt, order) -> provider.charge(attempt.downstreamKey().id(), order))
                    .result(ResultCodec.string())
                    .named("charge");
        }
        // end::phases-bean[]

        @Bean
        Phases<Connection, String, Exception> unnamedPhases() {
            return Phases.<Connection, String, Exception>prepare(tx -> "x", ResultCodec.string())
                    .call((attempt, x) -> x).result(ResultCodec.string());
        }
    }

    /** An application's component that runs named phases, so needs the engine typed as the one that runs them. */
    static final class Charges {
        final RecoveringLeasedIdempotency<Connection> leased;

        // tag::recovering-injection[]
        Charges(RecoveringLeasedIdempotency<Connection> leased) {
            this.leased = leased;
        }
        // end::recovering-injection[]
    }

    @Test
    void aComponentCreatedBeforeTheEngineIsInjectedWithItAsTheRecoveringOneByType() {
        runner.withUserConfiguration(Charges.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(Charges.class).leased).isSameAs(context.getBean(RecoveringLeasedIdempotency.class));
        });
    }

    @Test
    void noWorkerUnlessThePropertyAsksForOne() {
        runner.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(RecoveryWorker.class));
    }

    @Test
    @SuppressWarnings("unchecked")
    void onePropertyStartsAWorkerOverTheNamedPhasesBeans_thatFinishesAnOperationItsClientAbandoned() {
        Operations.provider.calls.set(0);
        runner.withPropertyValues("idempotency.recovery.enabled=true", "idempotency.recovery.interval=50ms",
                "idempotency.recovery.max-attempts=3").run(context -> {
                    assertThat(context).hasSingleBean(RecoveryWorker.class);
                    assertThat(context.getBean(RecoveryWorker.class).operations()).containsExactly("charge");
                    assertThat(context.getBean(RecoveryWorker.class)).hasToString(
                            "RecoveryWorker[operations=[charge], maxAttempts=3, interval=PT0.05S]");
                    RecoveringLeasedIdempotency<Connection> managed = context.getBean(RecoveringLeasedIdempotency.class);
                    NamedPhases<Connection, String, Exception> charge = context.getBean("chargePhases", NamedPhases.class);
                    IdempotencyKey key = IdempotencyKey.of("shop", "abandoned-1");
                    assertThatThrownBy(() -> managed.run(key, charge)).isInstanceOf(IOException.class); // the client never retries
                    JdbcTemplate jdbc = new JdbcTemplate(context.getBean(javax.sql.DataSource.class));
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    String status = null;
                    while (System.nanoTime() < deadline && !"COMPLETED".equals(status)) {
                        Thread.sleep(20);
                        status = jdbc.queryForObject("select status from idempotency_record where key_id = 'abandoned-1'", String.class);
                    }
                    assertThat(status).as("finished by the worker the context started").isEqualTo("COMPLETED");
                    Outcome<String> back = managed.run(key, charge);
                    assertThat(back.isReplay()).isTrue();
                    assertThat(back.value()).isEqualTo("charged order-7 under " + key.derive("downstream").id());
                    assertThat(Operations.provider.calls).as("the client's call and the worker's").hasValue(2);
                });
    }

    @Test
    void theWorkersSettingsAreChecked_namingTheProperty() {
        runner.withPropertyValues("idempotency.recovery.enabled=true", "idempotency.recovery.interval=0s").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasStackTraceContaining("idempotency.recovery.interval = PT0S is refused");
        });
        runner.withPropertyValues("idempotency.recovery.enabled=true", "idempotency.recovery.max-attempts=0").run(context ->
                assertThat(context.getStartupFailure()).hasStackTraceContaining("idempotency.recovery.max-attempts = 0 is refused"));
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(SpringBootLine.jdbcAutoConfigurations()))
                .withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
                .withPropertyValues("spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
                        "spring.datasource.generate-unique-name=false", "idempotency.recovery.enabled=true")
                .run(context -> assertThat(context.getStartupFailure())
                        .hasStackTraceContaining("idempotency.recovery.enabled = true is refused: no operation is registered")
                        .hasStackTraceContaining("NamedPhases bean"));
    }
}
