package dev.idempotency.examples.spring;

import java.io.PrintStream;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A Spring Boot application with one dependency on {@code idempotency-spring-boot-autoconfigure}:
 * the engine is configured from {@code application.properties}, and {@link PaymentService} pays
 * once per key however often a client retries. {@code main} plays a client's retries against the
 * service and prints what each one is answered.
 */
@SpringBootApplication
public class ShopApplication {

    /**
     * Starts the application, plays the retries, and stops it.
     *
     * @param args Spring Boot's arguments ({@code --spring.datasource.url=...} and the like)
     */
    public static void main(String[] args) {
        try (ConfigurableApplicationContext context = SpringApplication.run(ShopApplication.class, args)) {
            play(context.getBean(PaymentService.class), System.out);
        }
    }

    /**
     * A client's retries: a payment, its retry after a lost answer, the key reused for another
     * amount, and a payment whose transaction fails before commit, then retried.
     *
     * @param payments the service
     * @param out where to print each answer
     */
    static void play(PaymentService payments, PrintStream out) {
        out.println("first attempt:          " + payments.pay("alice", "key-1", 2_500));
        out.println("retry (answer lost):    " + payments.pay("alice", "key-1", 2_500));
        out.println("same key, other amount: " + payments.pay("alice", "key-1", 9_900));
        try {
            payments.payThenFail("bob", "key-2", 700);
        } catch (IllegalStateException e) {
            out.println("failed before commit:   " + e.getMessage() + " (payment and key rolled back)");
        }
        out.println("retry:                  " + payments.pay("bob", "key-2", 700));
        out.println("payments in the table:  " + payments.payments() + " (one per key)");
    }
}
