package dev.idempotency.spring.boot.autoconfigure.webmvc;

import dev.idempotency.http.ServerErrors;
import dev.idempotency.spring.webmvc.IdempotentEndpoint;
import dev.idempotency.testsupport.SpringBootLine;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.Base64;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.server.ResponseStatusException;

/**
 * The payments API of the HTTP demonstration as a Spring Boot application: {@code POST /payments}
 * with a form body, one payment inserted by {@code JdbcTemplate} per operation. Authentication is a
 * stand-in for Spring Security: a filter before this library's that takes the user of an HTTP Basic
 * header as the request's principal.
 */
@SpringBootApplication(excludeName = { SpringBootLine.BOOT4_HIBERNATE_JPA, SpringBootLine.BOOT3_HIBERNATE_JPA })
public class PaymentsApplication {

    /** Customer {@code slow}: the handler waits here, its transaction open, until released. */
    static volatile CountDownLatch entered = new CountDownLatch(1);
    static volatile CountDownLatch release = new CountDownLatch(1);
    /** The customers whose first payment on {@code /release/payments} got a 502. */
    static final java.util.Set<String> PROVIDER_DOWN_ONCE = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** Customer {@code flaky}: throws (unresolved, 500) after its insert while positive. */
    static final AtomicInteger FLAKY = new AtomicInteger();
    /** Customer {@code refused}: throws a {@code ResponseStatusException} (503) after its insert while positive. */
    static final AtomicInteger REFUSED = new AtomicInteger();

    @Bean
    MeterRegistry meterRegistry() { // the engine's metrics, as an actuator's registry would take them
        return new SimpleMeterRegistry();
    }

    @Bean
    OncePerRequestFilter basicAuthentication() {
        return new BasicUser();
    }

    /** Takes the user of an {@code Authorization: Basic} header as the principal (no password check: a test). */
    static final class BasicUser extends OncePerRequestFilter implements Ordered {
        @Override
        protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
                throws ServletException, IOException {
            String header = request.getHeader("Authorization");
            if (header == null || !header.startsWith("Basic ")) {
                chain.doFilter(request, response);
                return;
            }
            String user = new String(Base64.getDecoder().decode(header.substring(6)), StandardCharsets.UTF_8).split(":", 2)[0];
            Principal principal = () -> user;
            response.setHeader("X-Authenticated-As", user); // a header of an earlier filter, as CORS and security headers are
            chain.doFilter(new HttpServletRequestWrapper(request) {
                @Override
                public Principal getUserPrincipal() {
                    return principal;
                }
            }, response);
        }

        @Override
        public int getOrder() {
            return -100; // where Spring Security's filter chain runs
        }
    }

    @RestController
    static class Payments {

        private final JdbcTemplate jdbc;

        Payments(JdbcTemplate jdbc) {
            this.jdbc = jdbc;
        }

        // tag::controller[]
        @PostMapping("/payments")
        @IdempotentEndpoint // the insert and the 201 below commit together; a retry with the same key gets this 201 back
        ResponseEntity<String> pay(@RequestParam("customer") String customer, @RequestParam("cents") String cents, Principal shop) {
            if (!cents.matches("[1-9][0-9]{0,11}")) { // a 4xx decided here is the operation's answer: recorded too
                return ResponseEntity.badRequest().contentType(MediaType.APPLICATION_JSON).body("{\"error\":\"cents must be > 0\"}");
            }
            String id = UUID.randomUUID().toString();
            jdbc.update("insert into mvc_payment (id, shop, customer, cents) values (?, ?, ?, ?)",
                    id, shop.getName(), customer, Long.parseLong(cents));
            misbehave(customer); // the tests' faults: throw after the insert, or hold the transaction open
            return ResponseEntity.created(URI.create("/payments/" + id))
                    .contentType(MediaType.APPLICATION_JSON)
                    .body("{\"id\":\"" + id + "\",\"customer\":\"" + customer + "\",\"cents\":" + cents + "}");
        }
        // end::controller[]

        @PostMapping("/huge/payments")
        @IdempotentEndpoint // a response over the 1 MiB that the key's record holds
        ResponseEntity<String> payHuge(@RequestParam("customer") String customer, Principal shop) {
            String id = UUID.randomUUID().toString();
            jdbc.update("insert into mvc_payment (id, shop, customer, cents) values (?, ?, ?, ?)", id, shop.getName(), customer, 1L);
            return ResponseEntity.created(URI.create("/payments/" + id)).contentType(MediaType.APPLICATION_JSON)
                    .body("{\"id\":\"" + id + "\",\"pad\":\"" + "x".repeat(1024 * 1024) + "\"}");
        }

        // tag::release-endpoint[]
        @PostMapping("/release/payments")
        @IdempotentEndpoint(serverErrors = ServerErrors.RELEASE) // a 502 here is not the key's answer: the retry runs again
        ResponseEntity<String> payReleasing(@RequestParam("customer") String customer, Principal shop) {
            String id = UUID.randomUUID().toString();
            jdbc.update("insert into mvc_payment (id, shop, customer, cents) values (?, ?, ?, ?)", id, shop.getName(), customer, 1L);
            if (PROVIDER_DOWN_ONCE.add(customer)) { // rolled back with the insert, sent, not recorded
                return ResponseEntity.status(HttpStatus.BAD_GATEWAY).body("{\"error\":\"provider_unavailable\"}");
            }
            return ResponseEntity.created(URI.create("/payments/" + id)).body("{\"id\":\"" + id + "\"}");
        }
        // end::release-endpoint[]

        @GetMapping("/payments")
        @IdempotentEndpoint // a safe method: the key header is ignored and nothing is recorded
        String count(@RequestParam("customer") String customer) {
            return jdbc.queryForObject("select count(*) from mvc_payment where customer = ?", Integer.class, customer).toString();
        }

        @PostMapping("/logins")
        @IdempotentEndpoint // a cookie per first response: replayed only when Set-Cookie is a replayed header
        ResponseEntity<String> signIn(Principal shop) {
            return ResponseEntity.status(HttpStatus.CREATED)
                    .header(HttpHeaders.SET_COOKIE, "login=" + UUID.randomUUID() + "; Path=/; HttpOnly")
                    .body("signed in as " + shop.getName());
        }

        @PostMapping("/unprotected/payments")
        String unprotected() {
            return "not idempotent";
        }

        private static void misbehave(String customer) {
            if (customer.startsWith("slow")) {
                entered.countDown();
                try {
                    if (!release.await(30, TimeUnit.SECONDS)) {
                        throw new IllegalStateException("not released");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            }
            if (customer.startsWith("flaky") && FLAKY.getAndDecrement() > 0) {
                throw new IllegalStateException("the handler fails after its insert");
            }
            if (customer.startsWith("refused") && REFUSED.getAndDecrement() > 0) {
                throw new ResponseStatusException(HttpStatus.SERVICE_UNAVAILABLE, "the provider is down");
            }
        }
    }
}
