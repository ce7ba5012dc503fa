package dev.idempotency.jakarta.servlet;

import dev.idempotency.Idempotency;
import dev.idempotency.KeyPolicy;
import dev.idempotency.LeasedIdempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.RetryPolicy;
import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.http.ServerErrors;
import dev.idempotency.jakarta.testing.AbstractPaymentsTest.Hold;
import dev.idempotency.jakarta.testing.Jta;
import dev.idempotency.jakarta.transaction.JtaTransactions;
import dev.idempotency.LeaseAttempt;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.redis.RedisLeasingStore;
import dev.idempotency.spi.NoTransaction;
import dev.idempotency.testsupport.TestEnvironment;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import dev.idempotency.jdbc.JdbcTransactions;
import dev.idempotency.spi.TransactionRunner;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;

/**
 * A payments API on embedded Jetty 12 (ee10) on 127.0.0.1, for the tests: a plain servlet that
 * takes its own connections of a JTA-managed pool, behind {@link IdempotencyServletFilter} on
 * {@link JtaTransactions}. The scope is the {@code X-Client} header. What the servlet does is chosen
 * by the body's first word: {@code pay} inserts a payment and answers 201, {@code bad-gateway}
 * inserts one and answers 502 ({@code bad-gateway-once}: in the key's first run only), {@code large} inserts one and answers 201 with a body over 1 MiB,
 * {@code fail} inserts one and throws, {@code declined-final} throws a failure that
 * {@code /final/} declares final, {@code hold:NAME} waits until the test releases {@code NAME}.
 * Paths: {@code /payments/} (waits up to 10 s for a key's holder), {@code /quick/} (300 ms),
 * {@code /final/} (JDBC transactions), {@code /leased/} (lease mode), {@code /unreachable/} (lease mode on a
 * store that cannot be reached), {@code /unprotected/} (no filter). A filter before the layer's loses answers
 * after the commit, closing the connection ({@link LostAnswers}).
 */
final class JettyPayments extends JettyServer {

    /** A failure that the key policy of {@code /final/} declares final. */
    static final class Declined extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Declined() {
            super("the card was declined");
        }
    }

    private final DataSource dataSource;
    private final RedisClient redis;

    JettyPayments(DataSource dataSource) throws Exception {
        this.dataSource = dataSource;
        JdbcIdempotencyStore store = JdbcIdempotencyStore.ofDefaults();
        // tag::transactions[]
        JtaTransactions transactions = JtaTransactions.of(Jta.transactionManager(), dataSource); // dataSource: managed by it
        // end::transactions[]

        context.addServlet(new ServletHolder(new PaymentsServlet()), "/*");
        filter(context, "/payments/*", store, transactions, KeyPolicy.builder().lockTimeout(Duration.ofSeconds(10)).build(), 4096);
        filter(context, "/quick/*", store, transactions, KeyPolicy.builder().lockTimeout(Duration.ofMillis(300)).build(), 4096);
        // A final failure undoes the work to a savepoint, which Agroal refuses inside a JTA transaction: this path
        // runs the library's own JDBC transactions on the same pool, outside JTA, the servlet writing on the
        // filter's connection (the request attribute), the other way the filter hands its transaction on.
        filter(context, "/final/*", store, JdbcTransactions.of(dataSource), KeyPolicy.builder().finalFailures(Declined.class).build(),
                4096);
        // A servlet's 5xx released, not recorded: the JTA transaction rolls back with its writes, the retry runs it again.
        ManagedIdempotency<Connection> releasing = ManagedIdempotency.builder(Idempotency.builder(store)
                .keyPolicy(KeyPolicy.builder().lockTimeout(Duration.ofSeconds(10)).build()).build(), transactions)
                .retryPolicy(RetryPolicy.none()).build();
        context.addFilter(new FilterHolder(IdempotencyServletFilter.builder(HttpIdempotency.builder(releasing).build())
                .scope(request -> request.getHeader("X-Client")).serverErrors(ServerErrors.RELEASE).build()), "/release/*",
                EnumSet.of(DispatcherType.REQUEST));
        // Lease mode: the JDBC store's leases, the servlet outside any transaction (its own commit).
        LeasedIdempotency<Connection> leases = LeasedIdempotency.of(ManagedIdempotency.of(Idempotency.of(store),
                JdbcTransactions.of(dataSource)), store);
        context.addFilter(new FilterHolder(IdempotencyServletFilter.builder(HttpIdempotency.builder(leases).build())
                .scope(request -> request.getHeader("X-Client")).leased().build()), "/leased/*", EnumSet.of(DispatcherType.REQUEST));
        // Lease mode on a store that cannot be reached: the Redis store on a connection to the environment's server, closed.
        redis = RedisClient.create(TestEnvironment.require("IDEMPOTENCY_REDIS_URI", "run the suite with scripts/test, which starts Redis"));
        StatefulRedisConnection<byte[], byte[]> closed = redis.connect(ByteArrayCodec.INSTANCE);
        closed.close();
        LeasedIdempotency<NoTransaction> unreachable = LeasedIdempotency.of(RedisLeasingStore.builder(closed).build());
        context.addFilter(new FilterHolder(IdempotencyServletFilter.builder(HttpIdempotency.builder(unreachable).build())
                .scope(request -> request.getHeader("X-Client")).leased().build()), "/unreachable/*", EnumSet.of(DispatcherType.REQUEST));
        start();
    }

    private static void filter(ServletContextHandler context, String path, JdbcIdempotencyStore store,
                               TransactionRunner<Connection> transactions,
                               KeyPolicy policy, int maxRequestBytes) {
        // tag::filter[]
        ManagedIdempotency<Connection> managed = ManagedIdempotency.builder(Idempotency.builder(store).keyPolicy(policy).build(),
                transactions).retryPolicy(RetryPolicy.none()).build(); // a servlet request cannot be dispatched twice
        IdempotencyServletFilter filter = IdempotencyServletFilter.builder(HttpIdempotency.builder(managed).build())
                .scope(request -> request.getHeader("X-Client"))
                .maxRequestBytes(maxRequestBytes)
                .build();
        context.addFilter(new FilterHolder(filter), path, EnumSet.of(DispatcherType.REQUEST));
        // end::filter[]
    }

    @Override
    public void close() throws Exception {
        super.close();
        redis.shutdown();
    }

    /** The application's servlet: no idempotency code, its own connections of the managed pool. */
    private final class PaymentsServlet extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
            response.setStatus(200);
            response.setContentType("text/plain");
            response.getWriter().write("run " + System.nanoTime());
        }

        @Override
        protected void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException, ServletException {
            String scope = request.getHeader("X-Client");
            String key = request.getHeader("Idempotency-Key");
            int run = ran(scope, key);
            String body = new String(request.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            String word = body.split("\\s", 2)[0];
            if (word.startsWith("hold:")) {
                Hold hold = hold(word.substring(5));
                hold.entered.countDown();
                try {
                    if (!hold.release.await(30, TimeUnit.SECONDS)) {
                        throw new ServletException("never released");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new ServletException(e);
                }
            }
            if (request.getRequestURI().startsWith("/leased/")) {
                LeaseAttempt attempt = (LeaseAttempt) request.getAttribute(IdempotencyServletFilter.ATTEMPT_ATTRIBUTE);
                response.setHeader("X-Downstream-Key", attempt.downstreamKey().id());
            }
            if (word.equals("declined-final")) {
                throw new Declined();
            }
            String id;
            try {
                id = insert(request, scope, key, body);
            } catch (SQLException e) {
                throw new ServletException(e);
            }
            if (word.equals("fail")) {
                throw new ServletException("the servlet failed after its write");
            }
            response.setStatus(word.equals("bad-gateway") || word.equals("bad-gateway-once") && run == 1 ? 502 : 201);
            response.setContentType("application/json");
            response.setHeader("Location", "/payments/" + id);
            response.setHeader("X-Trace", "trace-" + System.nanoTime()); // not replayed
            String json = "{\"id\":\"" + id + "\",\"client\":\"" + scope + "\"}";
            if (word.equals("large")) {
                json = json + " ".repeat((1 << 20) + 100);
            }
            response.getWriter().write(json);
        }
    }

    /**
     * Inserts on the filter's connection on {@code /final/} (JDBC transactions), else on a connection
     * the servlet takes from the pool, which joins the request's JTA transaction.
     */
    // tag::servlet[]
    private String insert(HttpServletRequest request, String scope, String key, String body) throws SQLException {
        if (request.getRequestURI().startsWith("/final/")) { // JdbcTransactions: the filter's connection
            return Jta.insertPayment(IdempotencyServletFilter.transaction(request, Connection.class), scope, key, body);
        }
        try (Connection own = dataSource.getConnection()) { // JtaTransactions: any connection of the pool joins
            return Jta.insertPayment(own, scope, key, body);
        }
    }
    // end::servlet[]
}
