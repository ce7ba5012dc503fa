package dev.idempotency.examples.spring;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.IdempotentCall;
import dev.idempotency.Outcome;
import dev.idempotency.spring.SpringIdempotency;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.interceptor.TransactionAspectSupport;

/**
 * A payment service: a {@code @Transactional} method over {@code JdbcTemplate}, whose writes and
 * idempotency key commit together. What an HTTP controller would answer is returned as a
 * {@link Response}.
 */
@Service
public class PaymentService {

    /** What the endpoint answers: a status, a body, and whether it is a replay of the first answer. */
    public record Response(int status, String body, boolean replayed) {
    }

    // tag::service[]
    private final SpringIdempotency idempotency; // auto-configured on the application's DataSource
    private final JdbcTemplate jdbc;

    public PaymentService(SpringIdempotency idempotency, JdbcTemplate jdbc) {
        this.idempotency = idempotency;
        this.jdbc = jdbc;
    }

    @Transactional
    public Response pay(String customer, String idempotencyKey, long cents) {
        IdempotencyKey key = IdempotencyKey.of(customer, idempotencyKey); // the scope is the authenticated customer
        Fingerprint request = Fingerprint.ofParts("POST /payments", customer, Long.toString(cents));
        Outcome<Long> outcome = idempotency.execute(IdempotentCall.of(key, request), () -> {
            jdbc.update("insert into payment (customer, cents) values (?, ?)", customer, cents);
            return jdbc.queryForObject("select max(id) from payment where customer = ?", Long.class, customer);
        });
        return switch (outcome.status()) {
            case EXECUTED, REPLAYED -> new Response(201, "payment " + outcome.value(), outcome.isReplay());
            case IN_PROGRESS -> {
                TransactionAspectSupport.currentTransactionStatus().setRollbackOnly(); // the wait may have aborted it
                yield new Response(409, "a request with this key is still in progress; retry later", false);
            }
            case MISMATCH -> new Response(422, "this key was used for a different payment", false);
            case FAILED -> new Response(402, "the first attempt failed for good", outcome.isReplay());
        };
    }
    // end::service[]

    /**
     * Pays, then fails before the transaction commits: the payment and its key are rolled back
     * together, so that the client's retry pays once.
     *
     * @param customer the customer
     * @param idempotencyKey the client's key
     * @param cents the amount
     * @return never
     */
    @Transactional
    public Response payThenFail(String customer, String idempotencyKey, long cents) {
        pay(customer, idempotencyKey, cents);
        throw new IllegalStateException("the connection to the client was lost before the commit");
    }

    /** @return the number of payments in the table */
    @Transactional(readOnly = true)
    public int payments() {
        return jdbc.queryForObject("select count(*) from payment", Integer.class);
    }
}
