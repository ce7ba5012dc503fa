package dev.idempotency.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.testsupport.SpringBootLine;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;

/**
 * A real Boot application started with a bad {@code idempotency.*} value: Boot's failure analysis
 * (the analyzers of {@code META-INF/spring.factories}, the report Boot logs) names the property and
 * the value as written, instead of a stack trace. Boot's own output capture needs a newer JUnit than
 * the project's: this test captures the standard streams itself.
 */
class StartupFailureTest {

    @SpringBootConfiguration
    @EnableAutoConfiguration(excludeName = { SpringBootLine.BOOT4_HIBERNATE_JPA, SpringBootLine.BOOT3_HIBERNATE_JPA })
    static class Shop {
    }

    /** @return what the failed startup wrote to the standard output and error streams */
    private static String start(String... args) {
        SpringApplicationBuilder application = new SpringApplicationBuilder(Shop.class).web(WebApplicationType.NONE)
                .properties("spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID(), "spring.main.banner-mode=off");
        PrintStream out = System.out;
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream capture = new PrintStream(captured, true, StandardCharsets.UTF_8);
        System.setOut(capture);
        System.setErr(capture);
        try {
            assertThatThrownBy(() -> application.run(args)).isInstanceOf(RuntimeException.class);
        } finally {
            System.setOut(out);
            System.setErr(err);
        }
        String output = captured.toString(StandardCharsets.UTF_8);
        err.print(output);
        return output;
    }

    @Test
    void aRefusedValueIsReportedByBootsFailureAnalysis_withThePropertyAndTheValueAsWritten() {
        String output = start("--spring.config.name=startup-failure"); // startup-failure.properties: idempotency.lock-timeout=-1s
        assertThat(output).contains("APPLICATION FAILED TO START")
                .contains("Invalid value '-1s' for configuration property 'idempotency.lock-timeout'"
                        + " (originating from 'class path resource [startup-failure.properties] - 2:26')")
                .contains("lockTimeout must not be negative")
                .contains("Action:")
                .doesNotContain("Application run failed"); // Boot logs the stack trace only when no analyzer explains it
    }

    @Test
    void aRefusedTableNameIsReportedTheSameWay() {
        String output = start("--idempotency.table=order");
        assertThat(output).contains("APPLICATION FAILED TO START")
                .contains("Invalid value 'order' for configuration property 'idempotency.table' (originating from"
                        + " '\"idempotency.table\" from property source \"commandLineArgs\"')")
                .contains("reserved word")
                .doesNotContain("Application run failed");
    }
}
