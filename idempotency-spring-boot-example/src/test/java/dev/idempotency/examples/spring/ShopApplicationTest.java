package dev.idempotency.examples.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

/** Runs the example application as {@code main} does and checks what it claims. */
class ShopApplicationTest {

    @Test
    void oneKeyPaysOnce_aMismatchIsRefused_andARolledBackPaymentIsPaidByItsRetry() {
        try (ConfigurableApplicationContext context = SpringApplication.run(ShopApplication.class,
                "--spring.datasource.url=jdbc:h2:mem:shop-test;DB_CLOSE_DELAY=-1")) {
            PaymentService payments = context.getBean(PaymentService.class);
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            ShopApplication.play(payments, new PrintStream(bytes, true, StandardCharsets.UTF_8));
            String out = bytes.toString(StandardCharsets.UTF_8);

            assertThat(out).contains("first attempt:          Response[status=201, body=payment 1, replayed=false]")
                    .contains("retry (answer lost):    Response[status=201, body=payment 1, replayed=true]")
                    .contains("same key, other amount: Response[status=422")
                    .contains("retry:                  Response[status=201, body=payment 3, replayed=false]")
                    .contains("payments in the table:  2 (one per key)");
            assertThat(payments.payments()).isEqualTo(2);
        }
    }
}
