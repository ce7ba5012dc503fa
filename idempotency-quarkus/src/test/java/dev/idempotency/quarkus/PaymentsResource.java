package dev.idempotency.quarkus;

import dev.idempotency.http.ServerErrors;
import dev.idempotency.jakarta.rest.IdempotentResource;
import dev.idempotency.jakarta.testing.Jta;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Response;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * The test application's resource: a {@code @Transactional} method under {@link IdempotentResource}, its
 * writes on the default datasource. The body's first word says what it does: {@code pay} inserts a
 * payment and answers 201, {@code fail} inserts one and throws, {@code hold:NAME} waits until
 * {@code NAME} is released.
 */
@Path("/payments")
public class PaymentsResource {

    /** Runs per {@code client/key}, rolled-back ones included. */
    static final Map<String, AtomicInteger> RUNS = new ConcurrentHashMap<>();
    static final Map<String, CountDownLatch[]> HOLDS = new ConcurrentHashMap<>();

    @Inject
    DataSource dataSource;

    void createTable(@Observes StartupEvent start) throws SQLException {
        Jta.createPaymentsTable(dataSource);
    }

    static CountDownLatch[] hold(String name) {
        return HOLDS.computeIfAbsent(name, n -> new CountDownLatch[] {new CountDownLatch(1), new CountDownLatch(1)});
    }

    @GET
    public String run() {
        return "run " + System.nanoTime();
    }

    // tag::resource[]
    @POST
    @IdempotentResource
    @Transactional
    public Response pay(String body, @HeaderParam("X-Client") String client, @HeaderParam("Idempotency-Key") String key)
            throws SQLException, InterruptedException {
        RUNS.computeIfAbsent(client + "/" + key, k -> new AtomicInteger()).incrementAndGet();
        String word = body.split("\\s", 2)[0];
        if (word.startsWith("hold:")) {
            CountDownLatch[] hold = hold(word.substring(5));
            hold[0].countDown();
            hold[1].await(30, TimeUnit.SECONDS);
        }
        String id;
        try (Connection c = dataSource.getConnection()) {
            id = Jta.insertPayment(c, client, key, body);
        }
        if (word.equals("fail")) {
            throw new IllegalStateException("the resource method failed after its write");
        }
        return Response.status(201).type("application/json").entity("{\"id\":\"" + id + "\"}").build();
    }
    // end::resource[]

    /** A payment whose provider answers 502: its 5xx is released, so its write rolls back and a retry runs it again. */
    @POST
    @Path("/released")
    @IdempotentResource(serverErrors = ServerErrors.RELEASE)
    @Transactional
    public Response payReleasingServerErrors(String body, @HeaderParam("X-Client") String client,
                                             @HeaderParam("Idempotency-Key") String key) throws SQLException {
        RUNS.computeIfAbsent(client + "/" + key, k -> new AtomicInteger()).incrementAndGet();
        try (Connection c = dataSource.getConnection()) {
            Jta.insertPayment(c, client, key, body);
        }
        return Response.status(502).type("application/json").entity("{\"error\":\"the provider did not answer\"}").build();
    }

    /** @return the payments committed for the client's key */
    int payments(String client, String key) throws SQLException {
        return Jta.payments(dataSource, client, key);
    }

    /** @return whether the key has a committed record */
    boolean recorded(String client, String key) throws SQLException {
        return Jta.recorded(dataSource, client, key);
    }
}
