package dev.idempotency.spring.webmvc;

import java.net.URI;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** {@code POST /payments}: one payment row per run; {@link #RUNS} counts the runs. */
@RestController
class PlainPayments {

    static final AtomicInteger RUNS = new AtomicInteger();

    private final JdbcTemplate jdbc;

    PlainPayments(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
        jdbc.execute("create table if not exists plain_payment (id varchar(36) primary key, customer varchar(64) not null,"
                + " cents bigint not null)");
    }

    @PostMapping("/payments")
    @IdempotentEndpoint
    ResponseEntity<String> pay(@RequestParam("customer") String customer, @RequestParam("cents") long cents) {
        RUNS.incrementAndGet();
        String id = UUID.randomUUID().toString();
        jdbc.update("insert into plain_payment (id, customer, cents) values (?, ?, ?)", id, customer, cents);
        return ResponseEntity.created(URI.create("/payments/" + id)).contentType(MediaType.APPLICATION_JSON)
                .body("{\"id\":\"" + id + "\",\"customer\":\"" + customer + "\",\"cents\":" + cents + "}");
    }

    int count(String customer) {
        return jdbc.queryForObject("select count(*) from plain_payment where customer = ?", Integer.class, customer);
    }
}
