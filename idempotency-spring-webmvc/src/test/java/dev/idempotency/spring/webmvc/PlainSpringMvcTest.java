package dev.idempotency.spring.webmvc;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import org.apache.catalina.Context;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link EnableIdempotentEndpoints} in a Spring MVC application without Spring Boot: Spring's
 * {@code DispatcherServlet} on a plain {@code AnnotationConfigWebApplicationContext}
 * ({@link PlainPaymentsConfiguration}), set up by {@link PlainPaymentsInitializer} in embedded
 * Tomcat on 127.0.0.1 and a random port, the JDK's HTTP client over a real socket.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PlainSpringMvcTest {

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final PlainPaymentsInitializer initializer = new PlainPaymentsInitializer();
    private Tomcat tomcat;
    private URI base;

    @BeforeAll
    void start(@TempDir Path baseDir) throws LifecycleException {
        tomcat = new Tomcat();
        tomcat.setBaseDir(baseDir.toString());
        Connector connector = tomcat.getConnector();
        connector.setPort(0);
        connector.setProperty("address", "127.0.0.1");
        Context context = tomcat.addContext("", baseDir.toString());
        context.addServletContainerInitializer((classes, servletContext) -> initializer.onStartup(servletContext), null);
        tomcat.start();
        base = URI.create("http://127.0.0.1:" + connector.getLocalPort());
    }

    @AfterAll
    void stop() throws LifecycleException {
        if (tomcat != null) {
            tomcat.stop();
            tomcat.destroy();
        }
        if (initializer.context != null) {
            initializer.context.close();
        }
    }

    @Test
    void theSameKeyTwiceRunsTheHandlerOnce_andTheRetryGetsTheSameBodyMarkedAsAReplay() throws Exception {
        String customer = "alice-" + UUID.randomUUID().toString().substring(0, 8);
        String key = UUID.randomUUID().toString();
        int runsBefore = PlainPayments.RUNS.get();

        HttpResponse<byte[]> first = send(pay(key, customer, "1250"));
        HttpResponse<byte[]> retry = send(pay(key, customer, "1250"));

        assertThat(first.statusCode()).as(text(first)).isEqualTo(201);
        assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(text(first)).contains("\"customer\":\"" + customer + "\"");
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(retry.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
        assertThat(PlainPayments.RUNS.get() - runsBefore).isEqualTo(1);
        assertThat(payments().count(customer)).isEqualTo(1);
    }

    @Test
    void anotherBodyWithTheSameKeyIsTheMismatchProblem_andRunsNothing() throws Exception {
        String customer = "bob-" + UUID.randomUUID().toString().substring(0, 8);
        String key = UUID.randomUUID().toString();
        HttpResponse<byte[]> first = send(pay(key, customer, "100"));
        int runsAfterFirst = PlainPayments.RUNS.get();

        HttpResponse<byte[]> other = send(pay(key, customer, "999"));

        assertThat(first.statusCode()).as(text(first)).isEqualTo(201);
        assertThat(other.statusCode()).as(text(other)).isEqualTo(422);
        assertThat(other.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("application/problem+json"));
        assertThat(text(other)).contains("\"type\":\"https://github.com/idempotency/idempotency-java/blob/main/docs/http.md#key-reused\"");
        assertThat(PlainPayments.RUNS.get()).isEqualTo(runsAfterFirst);
        assertThat(payments().count(customer)).isEqualTo(1);
    }

    private PlainPayments payments() {
        return initializer.context.getBean(PlainPayments.class);
    }

    private HttpRequest pay(String key, String customer, String cents) {
        return HttpRequest.newBuilder(URI.create(base + "/payments")).timeout(Duration.ofSeconds(30))
                .header("X-Shop", "shop-a")
                .header("Idempotency-Key", key)
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString("customer=" + customer + "&cents=" + cents))
                .build();
    }

    private HttpResponse<byte[]> send(HttpRequest request) throws Exception {
        return http.send(request, HttpResponse.BodyHandlers.ofByteArray());
    }

    private static String text(HttpResponse<byte[]> response) {
        return new String(response.body(), StandardCharsets.UTF_8);
    }
}
