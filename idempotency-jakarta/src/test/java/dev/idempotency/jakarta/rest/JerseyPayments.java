package dev.idempotency.jakarta.rest;

import dev.idempotency.Idempotency;
import dev.idempotency.KeyPolicy;
import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.http.ServerErrors;
import dev.idempotency.jakarta.servlet.JettyServer;
import dev.idempotency.jakarta.servlet.LostAnswers;
import dev.idempotency.jakarta.testing.AbstractPaymentsTest.Hold;
import dev.idempotency.jakarta.testing.Jta;
import dev.idempotency.jakarta.transaction.JtaTransactions;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import jakarta.annotation.Priority;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;
import jakarta.ws.rs.core.UriInfo;
import java.security.Principal;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.servlet.ServletContainer;

/**
 * A payments API in Jakarta REST on Jersey 4 (its servlet container, on embedded Jetty 12 on
 * 127.0.0.1), for the tests: a resource whose {@code @IdempotentResource} method takes its own connections of
 * a JTA-managed pool, behind {@link IdempotencyRestFeature}. The client is the
 * {@code SecurityContext}'s principal, which an authentication filter takes from {@code X-Client}.
 * What the method does is chosen by the body's first word: {@code pay} inserts a payment and answers
 * 201, {@code bad-gateway} inserts one and answers 502, {@code none} inserts one and answers 204
 * without a body, {@code fail} inserts one and throws, {@code refuse} inserts one and throws a
 * {@code WebApplicationException} of 409, {@code hold:NAME} waits until the test releases
 * {@code NAME}; {@code POST released} answers 502 in a key's first run, 201 after, its annotation
 * releasing server errors. Applications: {@code /payments/} (waits up to 10 s for a key's holder),
 * {@code /quick/} (300 ms), {@code /releasing/} (the feature releases server errors),
 * {@code /unprotected/} (no feature). {@link LostAnswers} before them loses answers after the commit.
 */
final class JerseyPayments extends JettyServer {


    JerseyPayments(DataSource dataSource) throws Exception {
        JdbcIdempotencyStore store = JdbcIdempotencyStore.ofDefaults();
        JtaTransactions transactions = JtaTransactions.of(Jta.transactionManager(), dataSource);
        app(context, "/payments/*", dataSource, feature(store, transactions, Duration.ofSeconds(10)));
        app(context, "/quick/*", dataSource, feature(store, transactions, Duration.ofMillis(300)));
        app(context, "/releasing/*", dataSource, IdempotencyRestFeature.builder(HttpIdempotency.builder(Idempotency.of(store)).build(),
                transactions).serverErrors(ServerErrors.RELEASE).build());
        app(context, "/unprotected/*", dataSource, null);
        start();
    }

    private static IdempotencyRestFeature feature(JdbcIdempotencyStore store, JtaTransactions transactions, Duration lockTimeout) {
        // tag::feature[]
        Idempotency<Connection> engine = Idempotency.builder(store)
                .keyPolicy(KeyPolicy.builder().lockTimeout(lockTimeout).build()).build();
        IdempotencyRestFeature feature = IdempotencyRestFeature.builder(HttpIdempotency.builder(engine).build(), transactions)
                .maxRequestBytes(4096) // the scope: the SecurityContext's principal
                .build();
        // end::feature[]
        return feature;
    }

    private void app(ServletContextHandler context, String path, DataSource dataSource, IdempotencyRestFeature feature) {
        ResourceConfig app = new ResourceConfig().register(new Authentication()).register(new Payments(dataSource));
        if (feature != null) {
            app.register(feature);
        }
        context.addServlet(new ServletHolder(new ServletContainer(app)), path);
    }

    /** Authenticates the client named in {@code X-Client}, as an application's own authentication would. */
    @Priority(Priorities.AUTHENTICATION)
    static final class Authentication implements ContainerRequestFilter {
        @Override
        public void filter(ContainerRequestContext request) {
            String client = request.getHeaderString("X-Client");
            if (client == null) {
                return;
            }
            Principal principal = () -> client;
            request.setSecurityContext(new SecurityContext() {
                @Override
                public Principal getUserPrincipal() {
                    return principal;
                }

                @Override
                public boolean isUserInRole(String role) {
                    return false;
                }

                @Override
                public boolean isSecure() {
                    return false;
                }

                @Override
                public String getAuthenticationScheme() {
                    return "X-Client";
                }
            });
        }
    }

    /** The application's resource: no idempotency code but the annotation, its own connections of the managed pool. */
    @Path("/")
    public final class Payments {
        private final DataSource dataSource;

        Payments(DataSource dataSource) {
            this.dataSource = dataSource;
        }

        @GET
        public String run() {
            return "run " + System.nanoTime();
        }

        // tag::resource[]
        @POST
        @IdempotentResource
        public Response pay(String body, @HeaderParam("X-Client") String client, @HeaderParam("Idempotency-Key") String key,
                            @Context UriInfo uri) throws SQLException, InterruptedException {
            ran(client, key);
            String word = body.split("\\s", 2)[0];
            if (word.startsWith("hold:")) {
                Hold hold = hold(word.substring(5));
                hold.entered.countDown();
                if (!hold.release.await(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("never released");
                }
            }
            String id;
            try (Connection own = dataSource.getConnection()) { // joins the request's JTA transaction
                id = Jta.insertPayment(own, client, key, body);
            }
            if (word.equals("fail")) {
                throw new IllegalStateException("the resource method failed after its write");
            }
            if (word.equals("refuse")) {
                throw new WebApplicationException("refused after the write", 409);
            }
            if (word.equals("none")) {
                return Response.noContent().header("X-Trace", "trace-" + System.nanoTime()).build();
            }
            return Response.status(word.equals("bad-gateway") ? 502 : 201)
                    .location(uri.getBaseUriBuilder().path("payments").path(id).build())
                    .header("X-Trace", "trace-" + System.nanoTime()) // not replayed
                    .type("application/json")
                    .entity("{\"id\":\"" + id + "\",\"client\":\"" + client + "\"}")
                    .build();
        }
        // end::resource[]

        @POST
        @Path("released")
        @IdempotentResource(serverErrors = ServerErrors.RELEASE)
        public Response payReleased(String body, @HeaderParam("X-Client") String client, @HeaderParam("Idempotency-Key") String key,
                                    @Context UriInfo uri) throws SQLException, InterruptedException {
            return pay(runs(client, key) == 0 ? "bad-gateway" : "pay", client, key, uri);
        }
    }
}
