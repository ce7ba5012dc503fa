package dev.idempotency.examples.http;

import com.sun.net.httpserver.BasicAuthenticator;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.http.HttpAnswer;
import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.http.JdkHttpHandler;
import dev.idempotency.http.Request;
import dev.idempotency.http.Response;
import dev.idempotency.jdbc.Idempotent;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * A payments API on the JDK's HTTP server, on 127.0.0.1. {@code POST /payments} is behind the
 * {@code Idempotency-Key} layer; {@code POST /unprotected/payments} runs the very same handler
 * without it. Both take a form body ({@code customer=alice&cents=1250}), insert a payment and answer
 * {@code 201 Created} with its id; {@code GET /payments} counts the payments. {@code GET /} is a page
 * that sends each payment to both endpoints side by side (see {@link HttpPaymentsDemo}), and
 * {@code GET /stats}, read-only and without credentials, counts per endpoint the payment requests
 * that arrived and the payments committed. Clients authenticate
 * with HTTP Basic ({@code shop-a:secret-a}, {@code shop-b:secret-b}); the user name is the scope of
 * the keys, so one shop's key never replays another shop's payment.
 *
 * <p>The fault mode loses every n-th answer of each endpoint after the payment was committed: it
 * closes the connection ({@link Fault#CLOSE}) or answers only after the client gave up
 * ({@link Fault#LATE}). Thread-safe.
 */
public final class PaymentsApi implements AutoCloseable {

    /** How an answer is lost. */
    public enum Fault {
        /** Answers are never lost. */
        NONE,
        /** The connection is closed without an answer. */
        CLOSE,
        /** The answer is sent after the client's timeout. */
        LATE
    }

    /** The demonstration's clients and their passwords. */
    static final Map<String, String> CLIENTS = Map.of("shop-a", "secret-a", "shop-b", "secret-b");

    /** The page of {@code GET /}, next to this class. */
    private static final String PAGE = "payments.html";

    private final DataSource dataSource;
    private final HttpServer server;
    private final ExecutorService threads = Executors.newFixedThreadPool(8);
    private final Fault fault;
    private final int loseEvery;
    private final Duration lateBy;
    private final Map<String, AtomicLong> answers = new HashMap<>();
    private final Map<String, AtomicLong> received = new HashMap<>();

    /**
     * @param dataSource the database, with the payment table and the idempotency table
     * @param port the port on 127.0.0.1, or 0 for any free one
     * @param fault how answers are lost
     * @param loseEvery lose every n-th answer of each endpoint (2 or more)
     * @param lateBy how late a {@link Fault#LATE} answer is
     * @throws IOException if the server cannot listen
     */
    public PaymentsApi(DataSource dataSource, int port, Fault fault, int loseEvery, Duration lateBy) throws IOException {
        this.dataSource = dataSource;
        this.fault = fault;
        this.loseEvery = loseEvery;
        this.lateBy = lateBy;
        answers.put("/payments", new AtomicLong());
        answers.put("/unprotected/payments", new AtomicLong());
        received.put("/payments", new AtomicLong());
        received.put("/unprotected/payments", new AtomicLong());

        // tag::layer[]
        ManagedIdempotency<Connection> idempotency = Idempotent.managed(dataSource);
        HttpIdempotency<Connection> layer = HttpIdempotency.builder(idempotency).build();

        server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
        server.createContext("/payments", JdkHttpHandler.builder(layer, JdkHttpHandler.authenticatedUser())
                        .listener(this::loseSome) // the fault mode: after the commit, before the answer
                        .transactional(this::createPayment))
                .setAuthenticator(new Shops());
        // end::layer[]
        server.createContext("/unprotected/payments", this::unprotected).setAuthenticator(new Shops());
        server.createContext("/stats", this::stats);
        server.createContext("/", PaymentsApi::page);
        server.setExecutor(threads);
        server.start();
    }

    /**
     * Creates the tables if they are missing.
     *
     * @param dataSource the database
     * @throws SQLException if the database fails
     */
    public static void createTables(DataSource dataSource) throws SQLException {
        JdbcIdempotencyStore.ofDefaults().createTableIfMissing(dataSource);
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS payment (id VARCHAR(36) PRIMARY KEY, endpoint VARCHAR(40) NOT NULL,"
                    + " shop VARCHAR(64) NOT NULL, customer VARCHAR(100) NOT NULL, cents BIGINT NOT NULL)");
        }
    }

    /** @return the server's address, such as {@code http://127.0.0.1:8080} */
    public URI uri() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    // tag::handler[]
    /** Inserts a payment in the transaction it is given; the layer records the answer in the same one. */
    private Response createPayment(Request request, Connection tx) throws SQLException {
        if (request.method().equals("GET") || request.method().equals("HEAD")) { // safe: the key header is ignored, nothing recorded
            return Response.of(200).withBody("application/json", "{\"payments\":" + count(tx, "/payments") + "}");
        }
        Map<String, String> form = form(request.body());
        String customer = form.get("customer");
        String cents = form.get("cents");
        if (customer == null || cents == null || !cents.matches("[1-9][0-9]{0,11}")) { // a 4xx decided here is recorded too
            return Response.of(400).withBody("application/json", "{\"error\":\"send customer=...&cents=N (N > 0)\"}");
        }
        pause(form.get("delay")); // ?delay=N holds the transaction N seconds, to see a concurrent duplicate wait
        String id = insert(tx, request.target().split("\\?")[0], shopOf(request), customer, Long.parseLong(cents));
        return Response.of(201)
                .withHeader("Location", "/payments/" + id)
                .withBody("application/json", "{\"id\":\"" + id + "\",\"customer\":\"" + customer + "\",\"cents\":" + cents + "}");
    }
    // end::handler[]

    /** The same handler without the layer: every request that arrives makes a payment. */
    private void unprotected(HttpExchange exchange) throws IOException {
        try (exchange; Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            Request request = Request.of(exchange.getRequestMethod(), exchange.getRequestURI().getRawPath(), exchange.getRequestHeaders(),
                    exchange.getRequestBody().readAllBytes());
            Response response = createPayment(request, c);
            c.commit();
            loseSome(exchange, new HttpAnswer(response, HttpAnswer.Kind.UNKEYED));
            response.headers().forEach((name, values) -> exchange.getResponseHeaders().put(name, values));
            byte[] body = response.body();
            exchange.sendResponseHeaders(response.status(), body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        } catch (SQLException e) {
            throw new IOException("the database failed", e);
        }
    }

    /** {@code GET /stats}: per endpoint, the payment requests that arrived and the payments committed, as JSON. */
    private void stats(HttpExchange exchange) throws IOException {
        try (exchange) {
            if (!exchange.getRequestMethod().equals("GET")) {
                send(exchange, 405, "text/plain; charset=utf-8", "GET only\n".getBytes(StandardCharsets.UTF_8));
                return;
            }
            String json = "{\"unprotected\":" + side("/unprotected/payments") + ",\"protected\":" + side("/payments") + "}";
            send(exchange, 200, "application/json", json.getBytes(StandardCharsets.UTF_8));
        } catch (SQLException e) {
            throw new IOException("the database failed", e);
        }
    }

    private String side(String endpoint) throws SQLException {
        return "{\"requests\":" + requests(endpoint) + ",\"charges\":" + payments(endpoint) + "}";
    }

    /** {@code GET /}: the page, a resource next to this class. */
    private static void page(HttpExchange exchange) throws IOException {
        try (exchange) {
            if (!exchange.getRequestURI().getRawPath().equals("/") || !exchange.getRequestMethod().equals("GET")) {
                send(exchange, 404, "text/plain; charset=utf-8", "not found: the page is at /\n".getBytes(StandardCharsets.UTF_8));
                return;
            }
            byte[] page;
            try (InputStream in = PaymentsApi.class.getResourceAsStream(PAGE)) {
                if (in == null) {
                    throw new IOException("the resource " + PAGE + " is missing");
                }
                page = in.readAllBytes();
            }
            exchange.getResponseHeaders().set("Cache-Control", "no-store");
            send(exchange, 200, "text/html; charset=utf-8", page);
        }
    }

    private static void send(HttpExchange exchange, int status, String contentType, byte[] body) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", contentType);
        exchange.sendResponseHeaders(status, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    /** The fault mode: every n-th answer of an endpoint is lost, after its payment was committed. */
    private void loseSome(HttpExchange exchange, HttpAnswer answer) throws IOException {
        if (fault == Fault.NONE || !exchange.getRequestMethod().equals("POST")
                || answers.get(exchange.getHttpContext().getPath()).incrementAndGet() % loseEvery != 0) {
            return;
        }
        if (fault == Fault.CLOSE) {
            throw new IOException("fault mode: the connection is closed without an answer");
        }
        sleep(lateBy); // the client has given up by then
    }

    /**
     * @param endpoint {@code /payments} or {@code /unprotected/payments}
     * @return the payments committed through that endpoint
     * @throws SQLException if the database fails
     */
    public long payments(String endpoint) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return count(c, endpoint);
        }
    }

    /**
     * @param endpoint {@code /payments} or {@code /unprotected/payments}
     * @return the payment requests ({@code POST}) that arrived at that endpoint, answered or not
     */
    public long requests(String endpoint) {
        return received.get(endpoint).get();
    }

    private static long count(Connection c, String endpoint) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("SELECT COUNT(*) FROM payment WHERE endpoint = ?")) {
            s.setString(1, endpoint);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private static String insert(Connection tx, String endpoint, String shop, String customer, long cents) throws SQLException {
        String id = UUID.randomUUID().toString();
        try (PreparedStatement s = tx.prepareStatement("INSERT INTO payment (id, endpoint, shop, customer, cents) VALUES (?, ?, ?, ?, ?)")) {
            s.setString(1, id);
            s.setString(2, endpoint);
            s.setString(3, shop);
            s.setString(4, customer);
            s.setLong(5, cents);
            s.executeUpdate();
        }
        return id;
    }

    /** The shop named by the request's Basic credentials (checked by the context's authenticator). */
    private static String shopOf(Request request) {
        String credentials = request.header("Authorization").orElseThrow().substring("Basic ".length()).strip();
        String decoded = new String(java.util.Base64.getDecoder().decode(credentials), StandardCharsets.UTF_8);
        return decoded.substring(0, decoded.indexOf(':'));
    }

    private static Map<String, String> form(byte[] body) {
        Map<String, String> form = new HashMap<>();
        for (String pair : new String(body, StandardCharsets.UTF_8).split("&")) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                form.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
                        URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
            }
        }
        return form;
    }

    private static void pause(String seconds) {
        if (seconds != null && seconds.matches("[1-9]|10")) {
            sleep(Duration.ofSeconds(Long.parseLong(seconds)));
        }
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }

    /** HTTP Basic for the demonstration's shops; it also counts the payment requests that arrive, before anything else runs. */
    private final class Shops extends BasicAuthenticator {
        Shops() {
            super("payments");
        }

        @Override
        public Result authenticate(HttpExchange exchange) {
            if (exchange.getRequestMethod().equals("POST")) {
                received.get(exchange.getHttpContext().getPath()).incrementAndGet();
            }
            return super.authenticate(exchange);
        }

        @Override
        public boolean checkCredentials(String user, String password) {
            return password.equals(CLIENTS.get(user));
        }
    }
}
