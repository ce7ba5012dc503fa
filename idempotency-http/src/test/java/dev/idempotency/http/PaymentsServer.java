package dev.idempotency.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.idempotency.Idempotency;
import dev.idempotency.KeyPolicy;
import dev.idempotency.LeasePolicy;
import dev.idempotency.LeasedIdempotency;
import dev.idempotency.ManagedIdempotency;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.jdbc.JdbcTransactions;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * A payments API on the JDK's HTTP server on 127.0.0.1, for the tests: each endpoint the layer in
 * one of its modes, and the same handler unprotected. The scope is the {@code X-Client} header. What
 * the handler does is chosen by the request body's first word: {@code pay} inserts a payment and
 * answers 201, {@code decline} inserts one and answers 402, {@code bad-gateway} inserts one and answers 502, {@code large} inserts one and answers
 * 201 with a body over 1 MiB, {@code fail} throws, {@code fail-once}
 * throws the first time for a key, {@code hold:NAME} waits until the test releases {@code NAME} ({@code hold-first:NAME} only in the key's first
 * run), {@code declined-final} throws a failure that {@code /final/payments} declares final, {@code bad-gateway-once} inserts one and
 * answers 502 in the key's first run, 201 in the others. The {@code /release/...} endpoints release a handler's 5xx instead of
 * recording it, and send the record's expiry in {@code Idempotency-Key-Expires}.
 */
final class PaymentsServer implements AutoCloseable {

    static final String TABLE = "http_test_payment";

    /** A handler that waits inside its transaction until released. */
    static final class Hold {
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
    }

    /** A failure that the key policy of {@code /final/payments} declares final. */
    static final class Declined extends Exception {
        private static final long serialVersionUID = 1L;

        Declined() {
            super("the card was declined");
        }
    }

    private final DataSource dataSource;
    private final HttpServer server;
    private final ExecutorService threads = Executors.newFixedThreadPool(16);
    /** Handler runs per {@code scope/key}, rolled-back ones included. */
    final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    final Map<String, Hold> holds = new ConcurrentHashMap<>();
    /** Answers to lose per key: the connection is closed instead of answering, after the commit. */
    final Map<String, AtomicInteger> losses = new ConcurrentHashMap<>();
    /** Answers to delay per key, by this much, after the commit. */
    final Map<String, Duration> delays = new ConcurrentHashMap<>();
    private final Set<String> failedOnce = ConcurrentHashMap.newKeySet();

    PaymentsServer(DataSource dataSource) throws IOException, SQLException {
        this.dataSource = dataSource;
        JdbcIdempotencyStore store = JdbcIdempotencyStore.ofDefaults();
        store.createTableIfMissing(dataSource);
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS " + TABLE + " (id VARCHAR(36) PRIMARY KEY, scope VARCHAR(64) NOT NULL,"
                    + " idem_key VARCHAR(300), body VARCHAR(1000) NOT NULL)");
        }
        JdbcTransactions transactions = JdbcTransactions.of(dataSource);
        ManagedIdempotency<Connection> waiting = ManagedIdempotency.of(Idempotency.builder(store)
                .keyPolicy(KeyPolicy.builder().lockTimeout(Duration.ofSeconds(10)).build()).build(), transactions);
        ManagedIdempotency<Connection> quick = ManagedIdempotency.of(Idempotency.builder(store)
                .keyPolicy(KeyPolicy.builder().lockTimeout(Duration.ofMillis(300)).build()).build(), transactions);
        ManagedIdempotency<Connection> finals = ManagedIdempotency.of(Idempotency.builder(store)
                .keyPolicy(KeyPolicy.builder().finalFailures(Declined.class).build()).build(), transactions);
        // tag::uuid-keys[]
        ManagedIdempotency<Connection> uuids = ManagedIdempotency.of(Idempotency.builder(store)
                .keyPolicy(KeyPolicy.builder().idFormat(KeyPolicy.IdFormat.UUID).build()).build(), transactions);
        // end::uuid-keys[]
        ManagedIdempotency<Connection> plain = ManagedIdempotency.of(Idempotency.of(store), transactions);
        LeasedIdempotency<Connection> shortLease = LeasedIdempotency.of(plain, store,
                LeasePolicy.builder().lease(Duration.ofMillis(300)).build());
        LeasedIdempotency<Connection> leased = LeasedIdempotency.of(plain, store, LeasePolicy.builder().lease(Duration.ofSeconds(3)).build());

        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(threads);
        HttpIdempotency<Connection> layer = HttpIdempotency.builder(waiting).build();
        server.createContext("/payments", JdkHttpHandler.builder(layer, PaymentsServer::client)
                .listener(this::faults).maxRequestBytes(4096).transactional(this::pay));
        server.createContext("/quick/payments", JdkHttpHandler.builder(HttpIdempotency.builder(quick).build(), PaymentsServer::client)
                .transactional(this::pay));
        server.createContext("/uuid/payments", JdkHttpHandler.builder(HttpIdempotency.builder(uuids).build(), PaymentsServer::client)
                .transactional(this::pay));
        server.createContext("/own-header/payments", JdkHttpHandler.builder(HttpIdempotency.builder(waiting).keyHeader("X-Payment-Key")
                .build(), PaymentsServer::client).transactional(this::pay));
        server.createContext("/optional/payments", JdkHttpHandler.builder(HttpIdempotency.builder(waiting).keyRequired(false).build(),
                PaymentsServer::client).transactional(this::pay));
        server.createContext("/leased/payments", JdkHttpHandler.builder(HttpIdempotency.builder(leased).build(), PaymentsServer::client)
                .listener(this::faults).leased((request, attempt) -> {
                    try (Connection c = dataSource.getConnection()) { // its own commit: an effect outside the layer's transactions
                        return pay(request, c);
                    }
                }));
        server.createContext("/final/payments", JdkHttpHandler.builder(HttpIdempotency.builder(finals).build(), PaymentsServer::client)
                .transactional(this::pay));
        server.createContext("/short-lease/payments", JdkHttpHandler.builder(HttpIdempotency.builder(shortLease).build(),
                PaymentsServer::client).leased((request, attempt) -> {
                    try (Connection c = dataSource.getConnection()) {
                        return pay(request, c);
                    }
                }));
        HttpIdempotency<Connection> serverTx = HttpIdempotency.builder(waiting.engine()).build();
        server.createContext("/server-tx/payments", exchange -> serverTransaction(exchange, serverTx));
        // tag::release-server-errors[]
        HttpIdempotency<Connection> releasing = HttpIdempotency.builder(waiting)
                .serverErrors(ServerErrors.RELEASE)                // a handler's 5xx: nothing recorded, the retry runs it again
                .expiresHeader(HttpIdempotency.EXPIRES_HEADER)     // Idempotency-Key-Expires on replays and 409s
                .build();
        // end::release-server-errors[]
        server.createContext("/release/payments", JdkHttpHandler.builder(releasing, PaymentsServer::client).transactional(this::pay));
        server.createContext("/release/server-tx/payments", exchange -> serverTransaction(exchange,
                HttpIdempotency.builder(waiting.engine()).serverErrors(ServerErrors.RELEASE).build()));
        server.createContext("/release/leased/payments", JdkHttpHandler.builder(HttpIdempotency.builder(leased)
                .serverErrors(ServerErrors.RELEASE).expiresHeader(HttpIdempotency.EXPIRES_HEADER).build(), PaymentsServer::client)
                .leased((request, attempt) -> {
                    try (Connection c = dataSource.getConnection()) { // its own commit: an effect outside the layer's transactions
                        return pay(request, c);
                    }
                }));
        server.createContext("/unprotected/payments", exchange -> unprotected(exchange));
        server.start();
    }

    URI uri(String path) {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + path);
    }

    private static String client(HttpExchange exchange) {
        return exchange.getRequestHeaders().getFirst("X-Client");
    }

    private void faults(HttpExchange exchange, HttpAnswer answer) throws IOException {
        String key = client(exchange) + "/" + exchange.getRequestHeaders().getFirst("Idempotency-Key");
        AtomicInteger lose = losses.get(key);
        if (lose != null && lose.getAndDecrement() > 0) {
            throw new IOException("the test loses this answer");
        }
        Duration delay = delays.remove(key);
        if (delay != null) {
            sleep(delay);
        }
    }

    private Response pay(Request request, Connection tx) throws Exception {
        String body = new String(request.body(), StandardCharsets.UTF_8);
        String client = request.header("X-Client").orElseThrow();
        String key = request.header("X-Payment-Key").or(() -> request.header("Idempotency-Key")).orElse(null);
        String runKey = client + "/" + key;
        int run = runs.computeIfAbsent(runKey, k -> new AtomicInteger()).incrementAndGet();
        if (body.startsWith("hold:") || (body.startsWith("hold-first:") && run == 1)) {
            Hold hold = holds.get(body.substring(body.indexOf(':') + 1).strip());
            hold.entered.countDown();
            if (!hold.release.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("never released");
            }
        }
        if (body.startsWith("fail-once") && failedOnce.add(runKey)) {
            insert(tx, client, key, body); // written, then rolled back with the failure
            throw new IllegalStateException("the handler fails once for " + runKey);
        }
        if (body.equals("declined-final")) {
            insert(tx, client, key, body); // undone to the savepoint before the handler
            throw new Declined();
        }
        if (body.equals("fail")) {
            throw new IllegalStateException("the handler fails");
        }
        String id = insert(tx, client, key, body);
        if (body.equals("bad-gateway-once") && run == 1) { // the handler's own 5xx, once: released where the layer says so
            return Response.of(502).withBody("application/json", "{\"error\":\"provider_unavailable\",\"payment\":\"" + id + "\"}");
        }
        if (body.equals("bad-gateway")) { // the handler's own 5xx: the operation's answer, recorded
            return Response.of(502).withBody("application/json", "{\"error\":\"provider_unavailable\",\"payment\":\"" + id + "\"}");
        }
        if (body.equals("large")) { // over the default 1 MiB limit of a recorded response
            return Response.of(201).withBody("application/json", "{\"id\":\"" + id + "\",\"pad\":\"" + "x".repeat(1024 * 1024) + "\"}");
        }
        if (body.startsWith("decline")) {
            return Response.of(402).withBody("application/json", "{\"error\":\"card_declined\",\"payment\":\"" + id + "\"}");
        }
        return Response.of(201)
                .withHeader("Location", "/payments/" + id)
                .withHeader("Set-Cookie", "sid=" + UUID.randomUUID())
                .withHeader("X-Request-Id", UUID.randomUUID().toString())
                .withBody("application/json", "{\"id\":\"" + id + "\",\"client\":\"" + client + "\"}");
    }

    private static String insert(Connection tx, String client, String key, String body) throws SQLException {
        String id = UUID.randomUUID().toString();
        try (PreparedStatement insert = tx.prepareStatement("INSERT INTO " + TABLE + " (id, scope, idem_key, body) VALUES (?, ?, ?, ?)")) {
            insert.setString(1, id);
            insert.setString(2, client);
            insert.setString(3, key);
            insert.setString(4, body);
            insert.executeUpdate();
        }
        return id;
    }

    /** The layer in the server's own transaction, committed unless the answer says to roll back. */
    private void serverTransaction(HttpExchange exchange, HttpIdempotency<Connection> layer) throws IOException {
        try (exchange; Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            Request request = Request.of(exchange.getRequestMethod(), exchange.getRequestURI().getPath(), exchange.getRequestHeaders(),
                    exchange.getRequestBody().readAllBytes());
            HttpAnswer answer;
            try {
                answer = layer.handleIn(c, request, client(exchange), this::pay);
            } catch (Exception e) {
                c.rollback();
                exchange.sendResponseHeaders(500, -1);
                return;
            }
            if (answer.rollbackRequired()) {
                c.rollback();
            } else {
                c.commit();
            }
            answer.response().headers().forEach((n, v) -> exchange.getResponseHeaders().put(n, v));
            byte[] bytes = answer.response().body();
            exchange.sendResponseHeaders(answer.response().status(), bytes.length == 0 ? -1 : bytes.length);
            exchange.getResponseBody().write(bytes);
        } catch (SQLException e) {
            throw new IOException(e);
        }
    }

    /** The same handler without the layer: each request runs it. */
    private void unprotected(HttpExchange exchange) throws IOException {
        try (exchange; Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            Request request = Request.of(exchange.getRequestMethod(), exchange.getRequestURI().getPath(), exchange.getRequestHeaders(),
                    exchange.getRequestBody().readAllBytes());
            Response response = pay(request, c);
            c.commit();
            faults(exchange, new HttpAnswer(response, HttpAnswer.Kind.UNKEYED));
            byte[] bytes = response.body();
            exchange.sendResponseHeaders(response.status(), bytes.length);
            exchange.getResponseBody().write(bytes);
        } catch (IOException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException(e);
        }
    }

    /** @return the payments committed for a client's key */
    int payments(String client, String key) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement count = c.prepareStatement("SELECT COUNT(*) FROM " + TABLE + " WHERE scope = ? AND idem_key = ?")) {
            count.setString(1, client);
            count.setString(2, key);
            try (ResultSet rs = count.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /** @return whether the idempotency table has a record for a client's key */
    boolean recorded(String client, String key) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement count = c.prepareStatement("SELECT COUNT(*) FROM idempotency_record WHERE scope = ? AND key_id = ?")) {
            count.setString(1, client);
            count.setString(2, key);
            try (ResultSet rs = count.executeQuery()) {
                rs.next();
                return rs.getInt(1) > 0;
            }
        }
    }

    /** @return the expiry of a client's key's record, as the store wrote it */
    java.time.Instant expiresAt(String client, String key) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement read = c.prepareStatement("SELECT expires_at FROM idempotency_record WHERE scope = ? AND key_id = ?")) {
            read.setString(1, client);
            read.setString(2, key);
            try (ResultSet rs = read.executeQuery()) {
                if (!rs.next()) {
                    throw new IllegalStateException("no record for " + client + "/" + key);
                }
                return java.time.Instant.ofEpochMilli(rs.getLong(1));
            }
        }
    }

    int runs(String client, String key) {
        AtomicInteger n = runs.get(client + "/" + key);
        return n == null ? 0 : n.get();
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }
}
