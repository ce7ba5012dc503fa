package dev.idempotency.examples.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Runs the HTTP demonstration and checks the numbers it prints: more payments than operations unprotected, one each protected. */
class HttpPaymentsDemoTest {

    @Test
    void lostAnswersMakeDuplicatePaymentsUnprotectedAndExactlyOnePerOperationProtected(@TempDir Path dir) throws Exception {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        HttpPaymentsDemo.Row[] rows = HttpPaymentsDemo.run(HttpPaymentsDemo.Options.parse("--operations", "9", "--fault", "close",
                "--lose-every", "3", "--dir", dir.toString()), new PrintStream(printed, true, StandardCharsets.UTF_8));

        HttpPaymentsDemo.Row unprotected = rows[0];
        HttpPaymentsDemo.Row protectedRow = rows[1];
        assertThat(unprotected.endpoint()).isEqualTo("/unprotected/payments");
        assertThat(unprotected.requestsSent()).as("every third answer lost, each lost one retried").isGreaterThan(9);
        assertThat(unprotected.paymentsCreated()).as("a payment per request").isEqualTo(unprotected.requestsSent()).isGreaterThan(9);
        assertThat(unprotected.distinctIdsReceived()).as("the client saw one payment per operation").isEqualTo(9);
        assertThat(protectedRow.endpoint()).isEqualTo("/payments");
        assertThat(protectedRow.requestsSent()).isGreaterThan(9);
        assertThat(protectedRow.paymentsCreated()).as("exactly one payment per operation").isEqualTo(9);
        assertThat(protectedRow.distinctIdsReceived()).isEqualTo(9);
        assertThat(printed.toString(StandardCharsets.UTF_8))
                .contains("POST /unprotected/payments", "POST /payments", "distinct payment ids received")
                .contains("Protected:   9 payments for 9 operations");
    }

    @Test
    void theServerAloneKeepsItsDatabaseInAFolderOfItsOwnApartFromTheDemonstrations() {
        Path demonstration = HttpPaymentsDemo.Options.parse().dir();
        Path served = HttpPaymentsDemo.Options.parse("--serve").dir();

        assertThat(demonstration.endsWith(Path.of("target", "http-demo"))).as("%s", demonstration).isTrue();
        assertThat(served.endsWith(Path.of("target", "http-serve"))).as("the demonstration empties its folder; the server keeps its"
                + " own, not %s", served).isTrue();
        assertThat(HttpPaymentsDemo.Options.parse("--serve", "--dir", "elsewhere").dir()).isEqualTo(Path.of("elsewhere").toAbsolutePath());
    }

    @Test
    void answersSentAfterTheClientsTimeoutAreLostTheSameWay(@TempDir Path dir) throws Exception {
        HttpPaymentsDemo.Row[] rows = HttpPaymentsDemo.run(HttpPaymentsDemo.Options.parse("--operations", "2", "--fault", "late",
                "--lose-every", "2", "--dir", dir.toString()), new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));

        assertThat(rows[0].paymentsCreated()).isGreaterThan(2);
        assertThat(rows[1].paymentsCreated()).isEqualTo(2);
        assertThat(rows[1].distinctIdsReceived()).isEqualTo(2);
    }

    @Test
    void aHeadRequestIsAnsweredAsItsGetIsNotAsAPaymentWithoutAForm(@TempDir Path dir) throws Exception {
        JdbcDataSource dataSource = new JdbcDataSource();
        dataSource.setURL("jdbc:h2:file:" + dir.resolve("payments") + ";WRITE_DELAY=0");
        PaymentsApi.createTables(dataSource);
        try (PaymentsApi api = new PaymentsApi(dataSource, 0, PaymentsApi.Fault.NONE, 3, Duration.ofSeconds(1))) {
            HttpClient http = HttpClient.newHttpClient();
            String auth = "Basic " + Base64.getEncoder().encodeToString("shop-a:secret-a".getBytes(StandardCharsets.UTF_8));
            HttpResponse<String> get = http.send(HttpRequest.newBuilder(api.uri().resolve("/payments")).header("Authorization", auth).GET()
                    .build(), HttpResponse.BodyHandlers.ofString());
            HttpResponse<String> head = http.send(HttpRequest.newBuilder(api.uri().resolve("/payments")).header("Authorization", auth)
                    .method("HEAD", HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());

            assertThat(get.statusCode()).isEqualTo(200);
            assertThat(head.statusCode()).as("seen answering 400, the form error of a POST").isEqualTo(200);
            assertThat(head.headers().firstValue("Content-Type")).isEqualTo(get.headers().firstValue("Content-Type"));
            assertThat(head.body()).isEmpty();
            assertThat(api.payments("/payments")).isZero();
        }
    }
}
