package dev.idempotency.examples.jakarta;

import dev.idempotency.ManagedIdempotency;
import dev.idempotency.RetryPolicy;
import dev.idempotency.http.HttpIdempotency;
import dev.idempotency.jakarta.servlet.IdempotencyServletFilter;
import dev.idempotency.jdbc.Idempotent;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.jdbc.JdbcTransactions;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.UUID;
import javax.sql.DataSource;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.h2.jdbcx.JdbcDataSource;

/**
 * {@link IdempotencyServletFilter} in a plain Jetty 12 application, in one command: it starts Jetty
 * on 127.0.0.1 (a free port) with the filter in front of a payments servlet over an in-memory H2
 * database, the filter's transactions plain JDBC ones ({@link JdbcTransactions}, no JTA manager);
 * sends {@code POST /payments} twice with the same {@code Idempotency-Key} through the JDK's
 * {@code HttpClient}; prints both answers (201, then the first one's bytes again with
 * {@code Idempotent-Replayed: true}) and the count of payment rows (1); and stops.
 *
 * <pre>{@code
 * mvn -q -pl idempotency-examples -am compile exec:java -Dexec.mainClass=dev.idempotency.examples.jakarta.JakartaPaymentsDemo
 * }</pre>
 */
public final class JakartaPaymentsDemo {

    private JakartaPaymentsDemo() {
    }

    /**
     * What the demonstration saw.
     *
     * @param first the first answer's status
     * @param replay the second answer's status
     * @param replayed the second answer's {@code Idempotent-Replayed} header, or empty
     * @param sameBytes whether the second answer's body is the first one's, byte for byte
     * @param payments the payment rows in the database
     */
    public record Result(int first, int replay, String replayed, boolean sameBytes, long payments) {
    }

    /**
     * @param args none
     * @throws Exception if the server or the database fails
     */
    public static void main(String[] args) throws Exception {
        run(System.out);
    }

    /**
     * Runs the demonstration, printing to {@code out}.
     *
     * @param out where the answers and the count go
     * @return what it saw
     * @throws Exception if the server or the database fails
     */
    public static Result run(PrintStream out) throws Exception {
        JdbcDataSource dataSource = new JdbcDataSource();
        dataSource.setURL("jdbc:h2:mem:jakarta-demo-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        JdbcIdempotencyStore.ofDefaults().createTableIfMissing(dataSource);
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE payment (id VARCHAR(36) PRIMARY KEY, cents BIGINT NOT NULL)");
        }
        // tag::server[]
        ManagedIdempotency<Connection> managed = ManagedIdempotency.builder(Idempotent.ofDefaults(), JdbcTransactions.of(dataSource))
                .retryPolicy(RetryPolicy.none()).build(); // a servlet request cannot be dispatched twice
        IdempotencyServletFilter filter = IdempotencyServletFilter.builder(HttpIdempotency.builder(managed).build())
                .scope(request -> "demo-shop") // the authenticated client's name, in an application with authentication
                .build();
        ServletContextHandler context = new ServletContextHandler();
        context.addFilter(new FilterHolder(filter), "/payments", EnumSet.of(DispatcherType.REQUEST));
        context.addServlet(new ServletHolder(new PaymentsServlet()), "/payments");
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0); // a free port
        server.addConnector(connector);
        server.setHandler(context);
        server.start();
        // end::server[]
        try {
            HttpRequest payment = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/payments"))
                    .header("Idempotency-Key", UUID.randomUUID().toString())
                    .POST(HttpRequest.BodyPublishers.ofString("cents=1999"))
                    .build();
            HttpClient http = HttpClient.newHttpClient();
            HttpResponse<byte[]> first = http.send(payment, HttpResponse.BodyHandlers.ofByteArray());
            HttpResponse<byte[]> replay = http.send(payment, HttpResponse.BodyHandlers.ofByteArray()); // the client's retry
            String replayed = replay.headers().firstValue(HttpIdempotency.REPLAYED_HEADER).orElse("");
            Result result = new Result(first.statusCode(), replay.statusCode(), replayed, Arrays.equals(first.body(), replay.body()),
                    payments(dataSource));
            out.println("POST /payments, key " + payment.headers().firstValue("Idempotency-Key").orElseThrow());
            out.println("first:  " + first.statusCode() + " " + new String(first.body(), StandardCharsets.UTF_8));
            out.println("replay: " + replay.statusCode() + " " + new String(replay.body(), StandardCharsets.UTF_8)
                    + " (" + HttpIdempotency.REPLAYED_HEADER + ": " + replayed + ")");
            out.println("replay byte-equal to first: " + result.sameBytes());
            out.println("payment rows: " + result.payments());
            return result;
        } finally {
            server.stop();
        }
    }

    private static long payments(DataSource dataSource) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
             ResultSet rows = s.executeQuery("SELECT COUNT(*) FROM payment")) {
            rows.next();
            return rows.getLong(1);
        }
    }

    /** The application's servlet: no idempotency code; it writes on the filter's connection, in the filter's transaction. */
    // tag::servlet[]
    static final class PaymentsServlet extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException {
            long cents = Long.parseLong(new String(request.getInputStream().readAllBytes(), StandardCharsets.UTF_8).replace("cents=", ""));
            String id = UUID.randomUUID().toString();
            Connection tx = IdempotencyServletFilter.transaction(request, Connection.class); // JdbcTransactions: the filter's
            try (PreparedStatement insert = tx.prepareStatement("INSERT INTO payment (id, cents) VALUES (?, ?)")) {
                insert.setString(1, id);
                insert.setLong(2, cents);
                insert.executeUpdate();
            } catch (SQLException e) {
                throw new IOException(e); // rolled back with the key's claim: the retry runs it again
            }
            response.setStatus(201);
            response.setContentType("application/json");
            response.setHeader("Location", "/payments/" + id);
            response.getWriter().write("{\"id\":\"" + id + "\",\"cents\":" + cents + "}");
        }
    }
    // end::servlet[]
}
